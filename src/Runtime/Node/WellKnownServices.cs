namespace Camdoop.Runtime.Node;

/// <summary>Service ids used by the product. Ids are per node; the same service has the same id on every server.</summary>
public static class WellKnownServices
{
    public const byte LinkMonitor = 0;
    public const byte KeyRouting = 1;
    public const byte Ping = 2;
    public const byte Camdoop = 3;
    public const byte ChunkStore = 4;
    public const byte JobControl = 5;
    public const byte Tcp = 6;
    public const byte Monitoring = 7;
    public const byte ReReplication = 8;
}

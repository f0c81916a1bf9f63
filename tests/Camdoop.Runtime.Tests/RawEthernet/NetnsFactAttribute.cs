using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>
/// A test that needs root and `ip netns` (network namespaces, veth pairs, AF_PACKET sockets). It is skipped, with the
/// reason, only when those are missing; CI runs as root, so there it always runs for real.
/// </summary>
public sealed class NetnsFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> Unavailable = new(NetworkNamespace.WhyUnavailable);

    public NetnsFactAttribute()
    {
        if (Unavailable.Value is { } reason)
        {
            Skip = reason;
        }
    }
}

/// <summary>The raw-Ethernet tests share two CPUs with everyone else: run them one at a time.</summary>
[CollectionDefinition(Name)]
public sealed class RawEthernetCollection
{
    public const string Name = "RawEthernet";
}

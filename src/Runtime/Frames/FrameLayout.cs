namespace Camdoop.Runtime.Frames;

/// <summary>
/// Byte layout of a CamCube frame: Ethernet II header, the fixed CamCube header, an optional 20-byte
/// destination key (key-routed frames), then the service's payload.
/// <code>
///  0  dst MAC (6)   6  src MAC (6)   12 EtherType 0x88B5 (2)
///  14 version (1)   15 service (1)   16 flags (1)   17 TTL (1)
///  18 source x,y,z (3)   21 destination x,y,z (3)   24 payload length (2, big-endian)
///  26 [destination key (20) when flags has KeyRouted]   then payload
/// </code>
/// </summary>
public static class FrameLayout
{
    public const ushort EtherType = 0x88B5;
    public const byte Version = 1;

    public const int EthernetHeaderSize = 14;
    public const int CamCubeHeaderSize = 12;
    public const int HeaderSize = EthernetHeaderSize + CamCubeHeaderSize;
    public const int KeySize = 20;

    /// <summary>Jumbo frame, 9,000-byte MTU plus the 14-byte Ethernet header (the Camdoop paper, §5).</summary>
    public const int MaxFrameSize = 9014;

    /// <summary>Ethernet's minimum frame without FCS; shorter frames are padded.</summary>
    public const int MinFrameSize = 60;

    /// <summary>Pooled buffers are a little larger than a frame so that they come in one size class.</summary>
    public const int BufferSize = 9216;

    public const int MaxPayload = MaxFrameSize - HeaderSize;
    public const int MaxKeyedPayload = MaxPayload - KeySize;

    public const byte DefaultTtl = 64;

    internal const int OffsetEtherType = 12;
    internal const int OffsetVersion = 14;
    internal const int OffsetService = 15;
    internal const int OffsetFlags = 16;
    internal const int OffsetTtl = 17;
    internal const int OffsetSource = 18;
    internal const int OffsetDestination = 21;
    internal const int OffsetPayloadLength = 24;
    internal const int OffsetKey = HeaderSize;

    public static int PayloadOffset(bool keyRouted) => keyRouted ? HeaderSize + KeySize : HeaderSize;

    /// <summary>Largest payload that fits a frame of at most <paramref name="maxFrameSize"/> bytes.</summary>
    public static int MaxPayloadFor(int maxFrameSize, bool keyRouted) => maxFrameSize - PayloadOffset(keyRouted);
}

using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;

namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>Segment flags (byte 0 of a segment).</summary>
[Flags]
public enum TcpFlags : byte
{
    None = 0,

    /// <summary>The acknowledgement fields are meaningful (the segment travels from receiver to sender).</summary>
    Ack = 1,

    /// <summary>The stream ends with this segment's last byte.</summary>
    Fin = 2,

    /// <summary>ECN echo: the segment acknowledged was marked "congestion experienced" on its way.</summary>
    Ece = 4,

    Known = Ack | Fin | Ece,
}

/// <summary>
/// The byte layout of a TCP segment, the payload of a frame of service <see cref="WellKnownServices.Tcp"/>
/// (big-endian). Byte 1 is the network's ECN field, as in an IP header: the sender sets ECT, and a switch whose
/// queue is long sets CE (<see cref="TryMarkCongestion"/>) without knowing anything else of the segment.
/// <code>
///  0 u8  flags (TcpFlags)       1 u8  ECN: bit 0 ECT, bit 1 CE      2 u16 reserved, 0
///  4 u32 connection id          8 u64 sequence number (byte offset of the first payload byte)
/// 16 u64 acknowledgement (next byte expected)
/// 24 i64 timestamp (sender's clock)   32 i64 timestamp echo   40 payload
/// </code>
/// </summary>
public static class TcpWire
{
    public const int HeaderSize = 40;

    /// <summary>Largest payload of a segment in a jumbo frame.</summary>
    public const int MaxSegmentSize = FrameLayout.MaxPayload - HeaderSize;

    public const byte EcnCapable = 1;
    public const byte CongestionExperienced = 2;

    private const int OffsetEcn = 1;

    public static void Write(Span<byte> segment, in TcpSegment s)
    {
        segment[0] = (byte)s.Flags;
        segment[OffsetEcn] = s.Ecn;
        BinaryPrimitives.WriteUInt16BigEndian(segment[2..], 0);
        BinaryPrimitives.WriteUInt32BigEndian(segment[4..], s.Connection);
        BinaryPrimitives.WriteInt64BigEndian(segment[8..], s.Sequence);
        BinaryPrimitives.WriteInt64BigEndian(segment[16..], s.Acknowledgement);
        BinaryPrimitives.WriteInt64BigEndian(segment[24..], s.Timestamp);
        BinaryPrimitives.WriteInt64BigEndian(segment[32..], s.TimestampEcho);
    }

    /// <summary>Reads a segment's header; false for anything short, with unknown flags or bits, or negative numbers.</summary>
    public static bool TryRead(ReadOnlySpan<byte> segment, out TcpSegment s)
    {
        s = default;
        if (segment.Length < HeaderSize)
        {
            return false;
        }
        var flags = (TcpFlags)segment[0];
        byte ecn = segment[OffsetEcn];
        if ((flags & ~TcpFlags.Known) != 0 || ecn > (EcnCapable | CongestionExperienced) || BinaryPrimitives.ReadUInt16BigEndian(segment[2..]) != 0)
        {
            return false;
        }
        long seq = BinaryPrimitives.ReadInt64BigEndian(segment[8..]);
        long ack = BinaryPrimitives.ReadInt64BigEndian(segment[16..]);
        if (seq < 0 || ack < 0)
        {
            return false;
        }
        s = new TcpSegment(flags, ecn, BinaryPrimitives.ReadUInt32BigEndian(segment[4..]), seq, ack,
            BinaryPrimitives.ReadInt64BigEndian(segment[24..]), BinaryPrimitives.ReadInt64BigEndian(segment[32..]));
        return true;
    }

    /// <summary>
    /// The connection id of the segment a frame carries, which names its flow for path choices in the network
    /// (GRIN pins a flow to one path); 0 for any other frame.
    /// </summary>
    public static uint ConnectionOf(ReadOnlySpan<byte> frame, in FrameHeader header) =>
        header.ServiceId != WellKnownServices.Tcp || header.PayloadLength < HeaderSize
            ? 0
            : BinaryPrimitives.ReadUInt32BigEndian(frame[(header.PayloadOffset + 4)..]);

    /// <summary>
    /// What a switch does to a frame joining a long queue: if it carries an ECN-capable segment, marks it
    /// "congestion experienced" and returns true. Any other frame is left alone.
    /// </summary>
    public static bool TryMarkCongestion(Span<byte> frame, in FrameHeader header)
    {
        if (header.ServiceId != WellKnownServices.Tcp || header.PayloadLength < HeaderSize)
        {
            return false;
        }
        ref byte ecn = ref frame[header.PayloadOffset + OffsetEcn];
        if ((ecn & EcnCapable) == 0)
        {
            return false;
        }
        ecn |= CongestionExperienced;
        return true;
    }
}

/// <summary>A segment's header fields (<see cref="TcpWire"/>).</summary>
public readonly record struct TcpSegment(TcpFlags Flags, byte Ecn, uint Connection, long Sequence, long Acknowledgement, long Timestamp, long TimestampEcho)
{
    public bool IsAck => (Flags & TcpFlags.Ack) != 0;

    public bool CongestionExperienced => (Ecn & TcpWire.CongestionExperienced) != 0;
}

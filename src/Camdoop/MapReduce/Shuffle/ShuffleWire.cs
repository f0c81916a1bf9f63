using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>What a Camdoop frame carries.</summary>
public enum ShuffleFrameKind : byte
{
    /// <summary>Record-stream bytes of one or more streams of one job, all to the same vertex id.</summary>
    Data = 1,

    /// <summary>Cumulative acknowledgements and window updates of one or more streams of one job.</summary>
    Ack = 2,
}

[Flags]
public enum SegmentFlags : byte
{
    None = 0,

    /// <summary>The stream ends after this segment's bytes.</summary>
    Fin = 1,

    /// <summary>The sender is about to run out of window or data: acknowledge at once.</summary>
    AckNow = 2,

    /// <summary>A zero-length window probe: answer with the current window.</summary>
    Probe = 4,

    Known = Fin | AckNow | Probe,
}

[Flags]
public enum AckFlags : byte
{
    None = 0,

    /// <summary>The receiver holds the whole stream, FIN included.</summary>
    FinReceived = 1,

    /// <summary>The receiver saw bytes beyond a gap (a frame was lost): go back to the acknowledged offset now.</summary>
    Gap = 2,

    Known = FinReceived | Gap,
}

/// <summary>Why a received Camdoop frame was dropped (counted per reason).</summary>
public enum WireError : byte
{
    None = 0,
    Truncated,
    WrongVersion,
    UnknownKind,
    BadCount,
    BadSegment,
    BadFlags,
    BadCoordinate,
    TrailingBytes,
}

/// <summary>One data segment as read from a frame. Bytes point into the frame: valid only during the frame callback.</summary>
public readonly ref struct DataSegment
{
    public DataSegment(int reduceTask, int tree, Coordinate child, ulong offset, SegmentFlags flags, ReadOnlySpan<byte> bytes)
    {
        ReduceTask = reduceTask;
        Tree = tree;
        Child = child;
        Offset = offset;
        Flags = flags;
        Bytes = bytes;
    }

    public int ReduceTask { get; }

    public int Tree { get; }

    /// <summary>The sending vertex: the coordinate its vertex id carries (not necessarily the server that sent it).</summary>
    public Coordinate Child { get; }

    public ulong Offset { get; }

    public SegmentFlags Flags { get; }

    public ReadOnlySpan<byte> Bytes { get; }
}

/// <summary>One acknowledgement: the receiver holds bytes [0, Offset) of the child's stream and accepts up to Offset + Window.</summary>
public readonly record struct AckEntry(int ReduceTask, int Tree, Coordinate Child, ulong Offset, uint Window, AckFlags Flags);

/// <summary>
/// The Camdoop shuffle wire format: the payload of a key-routed CamCube frame (after the 20-byte destination key).
/// All integers big-endian.
/// <code>
/// frame header (16): u8 kind | u8 version (1) | u16 entry count | u32 reserved (0) | u64 job id
/// Data entry (20 + length): u32 reduce task | u8 tree | u8 flags | u16 length | u8 x,y,z of the child vertex |
///                           u8 reserved (0) | u64 stream offset of the first byte | length bytes
/// Ack entry (24):           u32 reduce task | u8 tree | u8 flags | u16 reserved (0) | u8 x,y,z of the child vertex |
///                           u8 reserved (0) | u64 cumulative offset | u32 window (bytes beyond the offset)
/// </code>
/// A stream is (job, reduce task, tree, child vertex) to the child's parent vertex; the frame's destination key is
/// the vertex id of the receiving vertex (data) or of the child (acks). Readers validate every field and length
/// and never throw on received bytes.
/// </summary>
public static class ShuffleWire
{
    public const byte Version = 1;
    public const int FrameHeaderSize = 16;
    public const int SegmentHeaderSize = 20;
    public const int AckEntrySize = 24;

    /// <summary>Largest payload of a key-routed jumbo frame.</summary>
    public const int MaxPayload = FrameLayout.MaxKeyedPayload;

    /// <summary>Most record bytes one segment can carry (a frame with a single segment).</summary>
    public const int MaxSegmentBytes = MaxPayload - FrameHeaderSize - SegmentHeaderSize;

    public const int MaxAcksPerFrame = (MaxPayload - FrameHeaderSize) / AckEntrySize;

    public static void WriteFrameHeader(Span<byte> payload, ShuffleFrameKind kind, int count, ulong jobId)
    {
        payload[0] = (byte)kind;
        payload[1] = Version;
        BinaryPrimitives.WriteUInt16BigEndian(payload[2..], (ushort)count);
        BinaryPrimitives.WriteUInt32BigEndian(payload[4..], 0);
        BinaryPrimitives.WriteUInt64BigEndian(payload[8..], jobId);
    }

    /// <summary>Sets the entry count of a frame whose header was written with a provisional count.</summary>
    public static void SetCount(Span<byte> payload, int count) => BinaryPrimitives.WriteUInt16BigEndian(payload[2..], (ushort)count);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void WriteSegmentHeader(Span<byte> destination, int reduceTask, int tree, SegmentFlags flags, int length, Coordinate child, ulong offset)
    {
        BinaryPrimitives.WriteUInt32BigEndian(destination, (uint)reduceTask);
        destination[4] = (byte)tree;
        destination[5] = (byte)flags;
        BinaryPrimitives.WriteUInt16BigEndian(destination[6..], (ushort)length);
        destination[8] = (byte)child.X;
        destination[9] = (byte)child.Y;
        destination[10] = (byte)child.Z;
        destination[11] = 0;
        BinaryPrimitives.WriteUInt64BigEndian(destination[12..], offset);
    }

    public static void WriteAck(Span<byte> destination, in AckEntry ack)
    {
        BinaryPrimitives.WriteUInt32BigEndian(destination, (uint)ack.ReduceTask);
        destination[4] = (byte)ack.Tree;
        destination[5] = (byte)ack.Flags;
        BinaryPrimitives.WriteUInt16BigEndian(destination[6..], 0);
        destination[8] = (byte)ack.Child.X;
        destination[9] = (byte)ack.Child.Y;
        destination[10] = (byte)ack.Child.Z;
        destination[11] = 0;
        BinaryPrimitives.WriteUInt64BigEndian(destination[12..], ack.Offset);
        BinaryPrimitives.WriteUInt32BigEndian(destination[20..], ack.Window);
    }

    /// <summary>Reads and checks the frame header: kind, version and an entry count that the payload can hold.</summary>
    public static WireError TryReadHeader(ReadOnlySpan<byte> payload, out ShuffleFrameKind kind, out int count, out ulong jobId)
    {
        kind = default;
        count = 0;
        jobId = 0;
        if (payload.Length < FrameHeaderSize)
        {
            return WireError.Truncated;
        }
        if (payload[1] != Version)
        {
            return WireError.WrongVersion;
        }
        kind = (ShuffleFrameKind)payload[0];
        count = BinaryPrimitives.ReadUInt16BigEndian(payload[2..]);
        jobId = BinaryPrimitives.ReadUInt64BigEndian(payload[8..]);
        if (BinaryPrimitives.ReadUInt32BigEndian(payload[4..]) != 0)
        {
            return WireError.BadFlags;
        }
        int body = payload.Length - FrameHeaderSize;
        switch (kind)
        {
            case ShuffleFrameKind.Data:
                return count == 0 || count > body / SegmentHeaderSize ? WireError.BadCount : WireError.None;
            case ShuffleFrameKind.Ack:
                return count == 0 || count * AckEntrySize != body ? WireError.BadCount : WireError.None;
            default:
                return WireError.UnknownKind;
        }
    }

    /// <summary>
    /// Reads the data segment at <paramref name="position"/> (advanced past it). Checks flags, the length against the
    /// payload, and that the child coordinate lies in the torus.
    /// </summary>
    public static WireError TryReadSegment(ReadOnlySpan<byte> payload, ref int position, Torus torus, out DataSegment segment)
    {
        segment = default;
        var rest = payload[position..];
        if (rest.Length < SegmentHeaderSize)
        {
            return WireError.Truncated;
        }
        uint reduceTask = BinaryPrimitives.ReadUInt32BigEndian(rest);
        int tree = rest[4];
        var flags = (SegmentFlags)rest[5];
        int length = BinaryPrimitives.ReadUInt16BigEndian(rest[6..]);
        if ((flags & ~SegmentFlags.Known) != 0 || rest[11] != 0)
        {
            return WireError.BadFlags;
        }
        if (reduceTask > int.MaxValue || tree >= Trees.TreeTopology.TreeCount || SegmentHeaderSize + length > rest.Length)
        {
            return WireError.BadSegment;
        }
        var child = new Coordinate(rest[8], rest[9], rest[10]);
        if (!torus.Contains(child))
        {
            return WireError.BadCoordinate;
        }
        ulong offset = BinaryPrimitives.ReadUInt64BigEndian(rest[12..]);
        if (offset > long.MaxValue - (ulong)length)
        {
            return WireError.BadSegment;
        }
        segment = new DataSegment((int)reduceTask, tree, child, offset, flags, rest.Slice(SegmentHeaderSize, length));
        position += SegmentHeaderSize + length;
        return WireError.None;
    }

    /// <summary>Reads the ack entry at <paramref name="position"/> (advanced past it).</summary>
    public static WireError TryReadAck(ReadOnlySpan<byte> payload, ref int position, Torus torus, out AckEntry ack)
    {
        ack = default;
        var rest = payload[position..];
        if (rest.Length < AckEntrySize)
        {
            return WireError.Truncated;
        }
        uint reduceTask = BinaryPrimitives.ReadUInt32BigEndian(rest);
        int tree = rest[4];
        var flags = (AckFlags)rest[5];
        if ((flags & ~AckFlags.Known) != 0 || BinaryPrimitives.ReadUInt16BigEndian(rest[6..]) != 0 || rest[11] != 0)
        {
            return WireError.BadFlags;
        }
        if (reduceTask > int.MaxValue || tree >= Trees.TreeTopology.TreeCount)
        {
            return WireError.BadSegment;
        }
        var child = new Coordinate(rest[8], rest[9], rest[10]);
        if (!torus.Contains(child))
        {
            return WireError.BadCoordinate;
        }
        ulong offset = BinaryPrimitives.ReadUInt64BigEndian(rest[12..]);
        if (offset > long.MaxValue)
        {
            return WireError.BadSegment;
        }
        ack = new AckEntry((int)reduceTask, tree, child, offset, BinaryPrimitives.ReadUInt32BigEndian(rest[20..]), flags);
        position += AckEntrySize;
        return WireError.None;
    }
}

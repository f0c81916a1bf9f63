using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using Camdoop.Records;
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

    /// <summary>Failure recovery: requests that a stream start again after a key (one or more, of one job).</summary>
    Control = 3,
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

    /// <summary>
    /// The segment starts a new epoch of the stream at offset 0, in answer to a resume request (failure recovery). A
    /// receiver awaiting the restart takes the epoch from any segment of it, not only this one (which may be lost on
    /// the way): the flag marks where a restarted stream begins, for whoever reads the frames.
    /// </summary>
    Restart = 8,

    Known = Fin | AckNow | Probe | Restart,
}

[Flags]
public enum ResumeFlags : byte
{
    None = 0,

    /// <summary>The request names the last key held; without it the stream starts again from its first record.</summary>
    HasKey = 1,

    Known = HasKey,
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

/// <summary>
/// Names one stream of a job: reduce task, tree (the stripe), the child's coordinate (the server whose vertex, or whose
/// map task, it comes from; not necessarily the server sending it after a failure), and the source: 0 for the child's
/// vertex, j &gt; 0 for the j-th map task of that server re-run elsewhere after a failure.
/// </summary>
public readonly record struct StreamId(int ReduceTask, int Tree, Coordinate Child, byte Source = 0);

/// <summary>One data segment as read from a frame. Bytes point into the frame: valid only during the frame callback.</summary>
public readonly ref struct DataSegment
{
    public DataSegment(int reduceTask, int tree, Coordinate child, ulong offset, SegmentFlags flags, ReadOnlySpan<byte> bytes, byte source = 0, byte epoch = 0)
    {
        ReduceTask = reduceTask;
        Tree = tree;
        Child = child;
        Offset = offset;
        Flags = flags;
        Bytes = bytes;
        Source = source;
        Epoch = epoch;
    }

    public int ReduceTask { get; }

    public int Tree { get; }

    /// <summary>The sending vertex: the coordinate its vertex id carries (not necessarily the server that sent it).</summary>
    public Coordinate Child { get; }

    /// <summary>0 for a vertex's stream, j &gt; 0 for a re-run map task's (see <see cref="StreamId"/>).</summary>
    public byte Source { get; }

    /// <summary>Which start of the stream the offset counts from: 0, then one more at each resume.</summary>
    public byte Epoch { get; }

    public StreamId Stream => new(ReduceTask, Tree, Child, Source);

    public ulong Offset { get; }

    public SegmentFlags Flags { get; }

    public ReadOnlySpan<byte> Bytes { get; }
}

/// <summary>
/// One acknowledgement: the receiver holds bytes [0, Offset) of the child's stream (in epoch <see cref="Epoch"/>) and
/// accepts up to Offset + Window.
/// </summary>
public readonly record struct AckEntry(int ReduceTask, int Tree, Coordinate Child, ulong Offset, uint Window, AckFlags Flags, byte Source = 0, byte Epoch = 0)
{
    public StreamId Stream => new(ReduceTask, Tree, Child, Source);
}

/// <summary>
/// A parent's request that a child stream start again (failure recovery, the Camdoop paper, §4.2): send, in a new
/// epoch from offset 0, the records after the first <see cref="Skip"/> records with key <see cref="Key"/> (every record
/// with a larger key), or every record when there is no key; to server <see cref="Requester"/>, which now hosts the
/// parent. <see cref="KnownEpoch"/> is the epoch the requester last accepted from the stream (0 if none): the child
/// starts one above it and above its own.
/// </summary>
public readonly ref struct ResumeRequest
{
    public ResumeRequest(StreamId stream, Coordinate requester, byte knownEpoch, bool hasKey, ReadOnlySpan<byte> key, uint skip)
    {
        Stream = stream;
        Requester = requester;
        KnownEpoch = knownEpoch;
        HasKey = hasKey;
        Key = key;
        Skip = skip;
    }

    public StreamId Stream { get; }

    public Coordinate Requester { get; }

    public byte KnownEpoch { get; }

    public bool HasKey { get; }

    public ReadOnlySpan<byte> Key { get; }

    public uint Skip { get; }
}

/// <summary>
/// The Camdoop shuffle wire format: the payload of a key-routed CamCube frame (after the 20-byte destination key).
/// All integers big-endian.
/// <code>
/// frame header (16): u8 kind | u8 version (1) | u16 entry count | u32 reserved (0) | u64 job id
/// Data entry (20 + length):   u8 source | u24 reduce task | u8 tree | u8 flags | u16 length | u8 x,y,z of the child |
///                             u8 epoch | u64 stream offset of the first byte | length bytes
/// Ack entry (24):             u8 source | u24 reduce task | u8 tree | u8 flags | u16 reserved (0) | u8 x,y,z of the
///                             child | u8 epoch | u64 cumulative offset | u32 window (bytes beyond the offset)
/// Resume entry (20 + length): u8 source | u24 reduce task | u8 tree | u8 flags | u16 key length | u8 x,y,z of the
///                             child | u8 known epoch | u8 x,y,z of the requester | u8 reserved (0) | u32 skip | key
/// </code>
/// A stream is (job, reduce task, tree, child, source) to the parent vertex (see <see cref="StreamId"/>); the frame's
/// destination key names the server hosting the receiving vertex (data), the child (acks), or the key the child's
/// vertex or map task is owned by (resume requests). Without failures source and epoch are 0. Readers validate every
/// field and length and never throw on received bytes.
/// </summary>
public static class ShuffleWire
{
    public const byte Version = 1;
    public const int FrameHeaderSize = 16;
    public const int SegmentHeaderSize = 20;
    public const int AckEntrySize = 24;
    public const int ResumeHeaderSize = 20;

    /// <summary>The longest key a restart request can carry: one entry in one control frame.</summary>
    public const int MaxResumeKeyBytes = MaxPayload - FrameHeaderSize - ResumeHeaderSize;

    /// <summary>
    /// The generation an epoch belongs to: its high four bits. A reduce task whose root failed starts over on new trees
    /// as its next generation (epochs from <see cref="FirstEpoch"/>); its streams' restarts count in the low four.
    /// </summary>
    public static int Generation(byte epoch) => epoch >> 4;

    /// <summary>The first epoch of generation <paramref name="generation"/> (0 to 15).</summary>
    public static byte FirstEpoch(int generation) => (byte)((generation & 0xF) << 4);

    /// <summary>Reduce tasks fit 24 bits (a torus has at most 2^24 servers: coordinates are bytes).</summary>
    public const int MaxReduceTasks = 1 << 24;

    /// <summary>
    /// Largest tree of a data segment or ack: the six trees, and one past them for a root reducer's stream to its
    /// output's replica.
    /// </summary>
    public const int MaxStreamTree = Trees.TreeTopology.TreeCount;

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
    public static void WriteSegmentHeader(Span<byte> destination, int reduceTask, int tree, SegmentFlags flags, int length, Coordinate child, ulong offset,
        byte source = 0, byte epoch = 0)
    {
        BinaryPrimitives.WriteUInt32BigEndian(destination, ((uint)source << 24) | (uint)reduceTask);
        destination[4] = (byte)tree;
        destination[5] = (byte)flags;
        BinaryPrimitives.WriteUInt16BigEndian(destination[6..], (ushort)length);
        destination[8] = (byte)child.X;
        destination[9] = (byte)child.Y;
        destination[10] = (byte)child.Z;
        destination[11] = epoch;
        BinaryPrimitives.WriteUInt64BigEndian(destination[12..], offset);
    }

    public static void WriteAck(Span<byte> destination, in AckEntry ack)
    {
        BinaryPrimitives.WriteUInt32BigEndian(destination, ((uint)ack.Source << 24) | (uint)ack.ReduceTask);
        destination[4] = (byte)ack.Tree;
        destination[5] = (byte)ack.Flags;
        BinaryPrimitives.WriteUInt16BigEndian(destination[6..], 0);
        destination[8] = (byte)ack.Child.X;
        destination[9] = (byte)ack.Child.Y;
        destination[10] = (byte)ack.Child.Z;
        destination[11] = ack.Epoch;
        BinaryPrimitives.WriteUInt64BigEndian(destination[12..], ack.Offset);
        BinaryPrimitives.WriteUInt32BigEndian(destination[20..], ack.Window);
    }

    /// <summary>Bytes a resume entry for <paramref name="keyLength"/> key bytes takes.</summary>
    public static int ResumeEntrySize(int keyLength) => ResumeHeaderSize + keyLength;

    /// <summary>Writes a resume entry at the start of <paramref name="destination"/> and returns its length.</summary>
    public static int WriteResume(Span<byte> destination, in ResumeRequest request)
    {
        var stream = request.Stream;
        int keyLength = request.HasKey ? request.Key.Length : 0;
        if (keyLength > ushort.MaxValue || destination.Length < ResumeEntrySize(keyLength))
        {
            throw new ArgumentException("the resume entry does not fit", nameof(destination));
        }
        BinaryPrimitives.WriteUInt32BigEndian(destination, ((uint)stream.Source << 24) | (uint)stream.ReduceTask);
        destination[4] = (byte)stream.Tree;
        destination[5] = (byte)(request.HasKey ? ResumeFlags.HasKey : ResumeFlags.None);
        BinaryPrimitives.WriteUInt16BigEndian(destination[6..], (ushort)keyLength);
        destination[8] = (byte)stream.Child.X;
        destination[9] = (byte)stream.Child.Y;
        destination[10] = (byte)stream.Child.Z;
        destination[11] = request.KnownEpoch;
        destination[12] = (byte)request.Requester.X;
        destination[13] = (byte)request.Requester.Y;
        destination[14] = (byte)request.Requester.Z;
        destination[15] = 0;
        BinaryPrimitives.WriteUInt32BigEndian(destination[16..], request.Skip);
        if (keyLength > 0)
        {
            request.Key.CopyTo(destination[ResumeHeaderSize..]);
        }
        return ResumeEntrySize(keyLength);
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
            case ShuffleFrameKind.Control:
                return count == 0 || count > body / ResumeHeaderSize ? WireError.BadCount : WireError.None;
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
        uint word = BinaryPrimitives.ReadUInt32BigEndian(rest);
        byte source = (byte)(word >> 24);
        int reduceTask = (int)(word & (MaxReduceTasks - 1));
        int tree = rest[4];
        var flags = (SegmentFlags)rest[5];
        int length = BinaryPrimitives.ReadUInt16BigEndian(rest[6..]);
        if ((flags & ~SegmentFlags.Known) != 0)
        {
            return WireError.BadFlags;
        }
        if (tree > MaxStreamTree || SegmentHeaderSize + length > rest.Length)
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
        segment = new DataSegment(reduceTask, tree, child, offset, flags, rest.Slice(SegmentHeaderSize, length), source, rest[11]);
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
        uint word = BinaryPrimitives.ReadUInt32BigEndian(rest);
        int tree = rest[4];
        var flags = (AckFlags)rest[5];
        if ((flags & ~AckFlags.Known) != 0 || BinaryPrimitives.ReadUInt16BigEndian(rest[6..]) != 0)
        {
            return WireError.BadFlags;
        }
        if (tree > MaxStreamTree)
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
        ack = new AckEntry((int)(word & (MaxReduceTasks - 1)), tree, child, offset, BinaryPrimitives.ReadUInt32BigEndian(rest[20..]), flags,
            (byte)(word >> 24), rest[11]);
        position += AckEntrySize;
        return WireError.None;
    }

    /// <summary>Reads the resume entry at <paramref name="position"/> (advanced past it).</summary>
    public static WireError TryReadResume(ReadOnlySpan<byte> payload, ref int position, Torus torus, out ResumeRequest request)
    {
        request = default;
        var rest = payload[position..];
        if (rest.Length < ResumeHeaderSize)
        {
            return WireError.Truncated;
        }
        uint word = BinaryPrimitives.ReadUInt32BigEndian(rest);
        int tree = rest[4];
        var flags = (ResumeFlags)rest[5];
        int keyLength = BinaryPrimitives.ReadUInt16BigEndian(rest[6..]);
        if ((flags & ~ResumeFlags.Known) != 0 || rest[15] != 0 || ((flags & ResumeFlags.HasKey) == 0 && keyLength != 0))
        {
            return WireError.BadFlags;
        }
        if (tree >= Trees.TreeTopology.TreeCount || ResumeHeaderSize + keyLength > rest.Length || keyLength > RecordLimits.MaxKeyBytes)
        {
            return WireError.BadSegment;
        }
        var child = new Coordinate(rest[8], rest[9], rest[10]);
        var requester = new Coordinate(rest[12], rest[13], rest[14]);
        if (!torus.Contains(child) || !torus.Contains(requester))
        {
            return WireError.BadCoordinate;
        }
        var stream = new StreamId((int)(word & (MaxReduceTasks - 1)), tree, child, (byte)(word >> 24));
        request = new ResumeRequest(stream, requester, rest[11], (flags & ResumeFlags.HasKey) != 0, rest.Slice(ResumeHeaderSize, keyLength),
            BinaryPrimitives.ReadUInt32BigEndian(rest[16..]));
        position += ResumeHeaderSize + keyLength;
        return WireError.None;
    }
}

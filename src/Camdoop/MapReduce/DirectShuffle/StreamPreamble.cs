using System.Buffers.Binary;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// The first bytes of every stream of a stream shuffle: which job, reduce task and aggregation tree its records are
/// for (big-endian). The sender is the stream's peer. <c>0 u64 job id, 8 u32 reduce task, 12 u32 tree, 16 records...</c>
/// An admission (a receiver telling its child to send) is a stream of only a preamble whose tree is negative,
/// <c>-1 - tree</c>: the child's stream of that reduce task and tree may go.
/// </summary>
public static class StreamPreamble
{
    public const int Size = 16;

    public static void Write(Span<byte> destination, ulong jobId, int reduceTask, int tree = 0)
    {
        BinaryPrimitives.WriteUInt64BigEndian(destination, jobId);
        BinaryPrimitives.WriteInt32BigEndian(destination[8..], reduceTask);
        BinaryPrimitives.WriteInt32BigEndian(destination[12..], tree);
    }

    /// <summary>The whole of an admission stream: the peer's stream of (<paramref name="reduceTask"/>, <paramref name="tree"/>) may send.</summary>
    public static void WriteAdmission(Span<byte> destination, ulong jobId, int reduceTask, int tree) => Write(destination, jobId, reduceTask, -1 - tree);

    /// <summary>Whether a preamble read is an admission, and of which tree.</summary>
    public static bool IsAdmission(int tree, out int admittedTree)
    {
        admittedTree = -1 - tree;
        return tree < 0;
    }

    public static (ulong JobId, int ReduceTask, int Tree) Read(ReadOnlySpan<byte> source) =>
        (BinaryPrimitives.ReadUInt64BigEndian(source), BinaryPrimitives.ReadInt32BigEndian(source[8..]),
            BinaryPrimitives.ReadInt32BigEndian(source[12..]));
}

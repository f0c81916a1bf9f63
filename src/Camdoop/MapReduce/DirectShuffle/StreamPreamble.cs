using System.Buffers.Binary;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// The first bytes of every stream of a stream shuffle: which job, reduce task and aggregation tree its records are
/// for (big-endian). The sender is the stream's peer. <c>0 u64 job id, 8 u32 reduce task, 12 u32 tree, 16 records...</c>
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

    public static (ulong JobId, int ReduceTask, int Tree) Read(ReadOnlySpan<byte> source) =>
        (BinaryPrimitives.ReadUInt64BigEndian(source), BinaryPrimitives.ReadInt32BigEndian(source[8..]),
            BinaryPrimitives.ReadInt32BigEndian(source[12..]));
}

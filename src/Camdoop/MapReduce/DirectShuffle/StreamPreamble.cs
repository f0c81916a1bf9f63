using System.Buffers.Binary;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// The first bytes of every direct-shuffle stream: which job and reduce task its records are for (big-endian).
/// The sender is the stream's peer. <c>0 u64 job id, 8 u32 reduce task, 12 records...</c>
/// </summary>
public static class StreamPreamble
{
    public const int Size = 12;

    public static void Write(Span<byte> destination, ulong jobId, int reduceTask)
    {
        BinaryPrimitives.WriteUInt64BigEndian(destination, jobId);
        BinaryPrimitives.WriteInt32BigEndian(destination[8..], reduceTask);
    }

    public static (ulong JobId, int ReduceTask) Read(ReadOnlySpan<byte> source) =>
        (BinaryPrimitives.ReadUInt64BigEndian(source), BinaryPrimitives.ReadInt32BigEndian(source[8..]));
}

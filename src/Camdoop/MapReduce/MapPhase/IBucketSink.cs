using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Where sorted, combined map output goes, one bucket (reduce task, stripe) at a time in bucket order: memory,
/// final run files, or a spill file.
/// </summary>
internal interface IBucketSink
{
    void BeginBucket(int bucket);

    void Write(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);

    /// <summary>Writes one record already in the stream encoding (<see cref="RecordCodec"/>).</summary>
    void WriteEncoded(ReadOnlySpan<byte> record, int keyLength, int valueLength);

    void EndBucket();
}

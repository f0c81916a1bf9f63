namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// A job-defined key order. It must agree with byte equality (Compare returns 0 only for identical bytes), because
/// stripes and hash partitions are computed from the key bytes.
/// </summary>
public interface IKeyComparer
{
    int Compare(ReadOnlySpan<byte> x, ReadOnlySpan<byte> y);
}

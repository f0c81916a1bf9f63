namespace Camdoop.MapReduce.MapPhase;

/// <summary>Records and bytes written per bucket (bucket = reduceTask * 6 + stripe).</summary>
internal sealed class BucketCounters(int buckets)
{
    public readonly long[] Records = new long[buckets];
    public readonly long[] KeyBytes = new long[buckets];
    public readonly long[] ValueBytes = new long[buckets];
    public readonly long[] EncodedBytes = new long[buckets];

    public void Add(int bucket, int keyLength, int valueLength, int encodedLength)
    {
        Records[bucket]++;
        KeyBytes[bucket] += keyLength;
        ValueBytes[bucket] += valueLength;
        EncodedBytes[bucket] += encodedLength;
    }
}

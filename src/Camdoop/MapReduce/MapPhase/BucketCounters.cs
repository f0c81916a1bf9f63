using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Records and bytes written per bucket (bucket = reduceTask * 6 + stripe). A sink writes one bucket at a time: it
/// opens it, counts each record into the open bucket's tally (fields, no array updates per record: those were a
/// tenth of writing a map task's runs) and closes it, which adds the tally to the bucket.
/// </summary>
internal sealed class BucketCounters(int buckets)
{
    public readonly long[] Records = new long[buckets];
    public readonly long[] KeyBytes = new long[buckets];
    public readonly long[] ValueBytes = new long[buckets];
    public readonly long[] EncodedBytes = new long[buckets];

    private int _open = -1;

    /// <summary>Records counted into the open bucket so far.</summary>
    public long OpenRecords { get; private set; }

    public long OpenKeyBytes { get; private set; }

    public long OpenValueBytes { get; private set; }

    public long OpenEncodedBytes { get; private set; }

    /// <summary>Closes the open bucket, if any, and opens <paramref name="bucket"/>.</summary>
    public void Open(int bucket)
    {
        Close();
        _open = bucket;
    }

    public void Add(int keyLength, int valueLength, int encodedLength)
    {
        OpenRecords++;
        OpenKeyBytes += keyLength;
        OpenValueBytes += valueLength;
        OpenEncodedBytes += encodedLength;
    }

    /// <summary>Records, logical bytes (key + value) and encoded bytes per reduce task: the buckets are (task, stripe).</summary>
    public (long[] Records, long[] LogicalBytes, long[] EncodedBytes) PerReduceTask(int reduceTasks)
    {
        var records = new long[reduceTasks];
        var logical = new long[reduceTasks];
        var encoded = new long[reduceTasks];
        for (int b = 0; b < Records.Length; b++)
        {
            int r = b / Stripes.Count;
            records[r] += Records[b];
            logical[r] += KeyBytes[b] + ValueBytes[b];
            encoded[r] += EncodedBytes[b];
        }
        return (records, logical, encoded);
    }

    /// <summary>Adds the open bucket's tally to its counters; nothing when no bucket is open.</summary>
    public void Close()
    {
        if (_open >= 0)
        {
            Records[_open] += OpenRecords;
            KeyBytes[_open] += OpenKeyBytes;
            ValueBytes[_open] += OpenValueBytes;
            EncodedBytes[_open] += OpenEncodedBytes;
        }
        _open = -1;
        OpenRecords = OpenKeyBytes = OpenValueBytes = OpenEncodedBytes = 0;
    }
}

using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>Writes each bucket to its own run file (one per reduce task and stripe).</summary>
internal sealed class RunFilesSink : IBucketSink, IDisposable
{
    private readonly string _directory;
    private readonly ulong _jobId;
    private readonly ulong _mapTaskId;
    private readonly bool _combined;
    private RunFileWriter? _writer;
    private int _bucket = -1;

    public RunFilesSink(string directory, int buckets, ulong jobId, ulong mapTaskId, bool combined)
    {
        _directory = directory;
        _jobId = jobId;
        _mapTaskId = mapTaskId;
        _combined = combined;
        Headers = new RunHeader[buckets];
        Counters = new BucketCounters(buckets);
        Directory.CreateDirectory(directory);
    }

    public RunHeader[] Headers { get; }

    public BucketCounters Counters { get; }

    public void BeginBucket(int bucket)
    {
        // Empty buckets still get a (header-only) run file: every leaf has a stream to send and end.
        for (int b = _bucket + 1; b < bucket; b++)
        {
            Open(b);
            EndBucket();
        }
        Open(bucket);
    }

    public void Write(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        _writer!.Write(key, value);
        Counters.Add(_bucket, key.Length, value.Length, RecordCodec.EncodedLength(key.Length, value.Length));
    }

    public void EndBucket()
    {
        Headers[_bucket] = _writer!.Complete();
        _writer = null;
    }

    public void Complete()
    {
        for (int b = _bucket + 1; b < Headers.Length; b++)
        {
            Open(b);
            EndBucket();
        }
    }

    public void Dispose() => _writer?.Dispose();

    private void Open(int bucket)
    {
        _bucket = bucket;
        _writer = new RunFileWriter(
            RunFileLayout.RunPath(_directory, bucket / Stripes.Count, bucket % Stripes.Count),
            _jobId, _mapTaskId, bucket / Stripes.Count, bucket % Stripes.Count, _combined);
    }
}

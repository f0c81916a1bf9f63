using Camdoop.MapReduce.Jobs;
using Camdoop.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    /// <summary>Whether any key has been emitted since the last reset.</summary>
    public bool HasEmitted => _lastEmitted.HasKey;

    /// <summary>
    /// The key of the last complete group or record emitted (for Reduce, the key whose values were reduced). Every
    /// key up to it has been fully emitted: what recovery needs (the Camdoop paper, §4.2).
    /// </summary>
    public ReadOnlySpan<byte> LastEmittedKey => _lastEmitted.Get(_inputs);

    /// <summary>Whether anything has been consumed from <paramref name="input"/>.</summary>
    public bool HasConsumed(int input) => _inputs[input].HasConsumed;

    /// <summary>
    /// The key of the last record consumed from <paramref name="input"/> (merged, folded or collected): a replacement
    /// source for this input must resend only the records after it.
    /// </summary>
    public ReadOnlySpan<byte> LastConsumedKey(int input) => _inputs[input].LastConsumedKey;

    /// <summary>Bytes of output produced but not yet handed out by <see cref="Drain"/>.</summary>
    public int PendingOutputBytes => _pending.Count;

    /// <summary>Receives the reduce function's output records.</summary>
    private sealed class PendingEmitter(StreamMerger owner) : IRecordEmitter
    {
        // Built once: Emit runs for every reduce output record.
        private readonly string _producer = $"reduce of job '{owner._job.Name}'";

        public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
        {
            RecordLimits.Check(key.Length, value.Length, _producer);
            owner._pending.AddRecord(key, value);
            owner.OutputRecords++;
        }
    }
}

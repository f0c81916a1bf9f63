using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    // Output that did not fit the caller's span (a record split across Drain calls, or reduce results).
    private readonly PendingOutput _pending = new();
    private readonly PendingEmitter _emitter;

    // Last emitted key: by (input, offset) until the Drain call ends, then copied. An index, not the array, so
    // noting it costs no GC write barrier per record.
    private byte[] _lastKey = new byte[64];
    private int _lastKeyLength;
    private bool _hasLastKey;
    private int _lastKeyInput = -1;
    private int _lastKeyRecordStart;

    /// <summary>Whether any key has been emitted since the last reset.</summary>
    public bool HasEmitted => _hasLastKey || _lastKeyInput >= 0;

    /// <summary>
    /// The key of the last complete group or record emitted (for Reduce, the key whose values were reduced). Every
    /// key up to it has been fully emitted: what recovery needs (the Camdoop paper, §4.2).
    /// </summary>
    public ReadOnlySpan<byte> LastEmittedKey =>
        _lastKeyInput >= 0 ? KeyAt(_inputs[_lastKeyInput].Data, _lastKeyRecordStart)
        : _hasLastKey ? _lastKey.AsSpan(0, _lastKeyLength) : default;

    /// <summary>Whether anything has been consumed from <paramref name="input"/>.</summary>
    public bool HasConsumed(int input) => _inputs[input].HasLastConsumedKey || _inputs[input].ConsumedStart >= 0;

    /// <summary>
    /// The key of the last record consumed from <paramref name="input"/> (merged, folded or collected): a replacement
    /// source for this input must resend only the records after it.
    /// </summary>
    public ReadOnlySpan<byte> LastConsumedKey(int input)
    {
        ref var s = ref _inputs[input];
        return s.ConsumedStart >= 0 ? ConsumedKey(ref s)
            : s.HasLastConsumedKey ? s.LastConsumedKey.AsSpan(0, s.LastConsumedKeyLength) : default;
    }

    /// <summary>The key of the record at ConsumedStart (a whole record, parsed before).</summary>
    private static ReadOnlySpan<byte> ConsumedKey(ref InputState s) => KeyAt(s.Data, s.ConsumedStart);

    /// <summary>Bytes of output produced but not yet handed out by <see cref="Drain"/>.</summary>
    public int PendingOutputBytes => _pending.Count;

    /// <summary>Notes the record at <paramref name="recordStart"/> of an input as the last emitted one.</summary>
    private void NoteEmitted(int input, int recordStart)
    {
        _lastKeyInput = input;
        _lastKeyRecordStart = recordStart;
    }

    /// <summary>The key of the whole record at <paramref name="recordStart"/> (parsed before, so complete).</summary>
    private static ReadOnlySpan<byte> KeyAt(byte[] data, int recordStart)
    {
        var record = data.AsSpan(recordStart);
        RecordCodec.TryParse(record, out var bounds);
        return record.Slice(bounds.KeyOffset, bounds.KeyLength);
    }

    private void SetLastKey(ReadOnlySpan<byte> key)
    {
        if (_lastKey.Length < key.Length)
        {
            Array.Resize(ref _lastKey, Math.Max(_lastKey.Length * 2, key.Length));
        }
        key.CopyTo(_lastKey);
        _lastKeyLength = key.Length;
        _hasLastKey = true;
        _lastKeyInput = -1;
    }

    /// <summary>Copies keys still referenced by position, before a later Append may move the bytes.</summary>
    private void SaveKeys()
    {
        if (_lastKeyInput >= 0)
        {
            SetLastKey(KeyAt(_inputs[_lastKeyInput].Data, _lastKeyRecordStart));
        }
        for (int i = 0; i < _inputs.Length; i++)
        {
            ref var s = ref _inputs[i];
            if (s.ConsumedStart >= 0)
            {
                var key = ConsumedKey(ref s);
                if (s.LastConsumedKey.Length < key.Length)
                {
                    s.LastConsumedKey = new byte[Math.Max(key.Length, s.LastConsumedKey.Length * 2)];
                }
                key.CopyTo(s.LastConsumedKey);
                s.LastConsumedKeyLength = key.Length;
                s.HasLastConsumedKey = true;
                s.ConsumedStart = -1;
            }
        }
    }

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

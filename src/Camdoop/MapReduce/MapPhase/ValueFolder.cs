using Camdoop.MapReduce.Jobs;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>Folds the values of one key with the job's combiner, growing its buffers as the combiner asks.</summary>
internal sealed class ValueFolder(IMapReduceJob job)
{
    private byte[] _value = new byte[64];
    private byte[] _scratch = new byte[64];
    private int _length;

    public ReadOnlySpan<byte> Value => _value.AsSpan(0, _length);

    public void Start(ReadOnlySpan<byte> value)
    {
        if (_value.Length < value.Length)
        {
            _value = new byte[Math.Max(value.Length, _value.Length * 2)];
        }
        value.CopyTo(_value);
        _length = value.Length;
    }

    public void Fold(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        while (true)
        {
            if (job.TryCombine(key, Value, value, _scratch, out int written))
            {
                if ((uint)written > (uint)_scratch.Length)
                {
                    throw new InvalidOperationException(
                        $"the combiner of job '{job.Name}' reported {written} bytes written into a {_scratch.Length}-byte buffer");
                }
                (_value, _scratch) = (_scratch, _value);
                _length = written;
                return;
            }
            if (_scratch.Length >= RecordLimits.MaxValueBytes)
            {
                throw new RecordTooLargeException(
                    $"the combiner of job '{job.Name}' needs more than {RecordLimits.MaxValueBytes} bytes for one value (the value limit)");
            }
            _scratch = new byte[Math.Min(RecordLimits.MaxValueBytes, Math.Max(_scratch.Length * 2, _length + value.Length))];
        }
    }
}

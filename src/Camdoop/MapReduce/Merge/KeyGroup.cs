using Camdoop.MapReduce.Jobs;
using Camdoop.Records;

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// The values of one key of a <see cref="StreamMerger"/> in Combine or Reduce mode: folded into an accumulator with
/// the job's combiner, or, for a reduce that is not associative (<c>collect</c>), gathered in merge order.
/// <para>
/// Invariants: while <see cref="IsOpen"/>, the group holds a copy of its key and the key's prefix (the input bytes may
/// move while it waits), and the accumulator (or the gathered values) holds every value consumed with that key so
/// far; the merger closes it only when no live input can still deliver the key. The accumulator serves also a key
/// folded whole in one step, without opening the group. Its array always has at least 32 bytes, so a short value can
/// be copied out as one 32-byte block.
/// </para>
/// <para>
/// A mutable struct, held in a field of the merger and used in place: the fold runs per record, and a separate object
/// would cost a pointer chase on each.
/// </para>
/// </summary>
internal struct KeyGroup(IMapReduceJob job, bool collect)
{
    private byte[] _key = new byte[64];
    private int _keyLength;

    // Fold state: the accumulated value and the combiner's destination, swapped after each fold.
    private byte[] _accumulator = new byte[64];
    private int _accumulatorLength;
    private byte[] _scratch = new byte[64];

    // Gathered values (collect), back to back, and their end offsets.
    private byte[] _values = new byte[256];
    private int _valuesLength;
    private int[] _valueEnds = new int[16];
    private int _valueCount;

    /// <summary>Whether a key is held, waiting for an input that may still deliver it.</summary>
    public bool IsOpen { readonly get; private set; }

    /// <summary>The held key's prefix (<see cref="HeadPrefixes"/>).</summary>
    public ulong Prefix { readonly get; private set; }

    /// <summary>The held key (the last one held, once closed).</summary>
    public readonly ReadOnlySpan<byte> Key => _key.AsSpan(0, _keyLength);

    /// <summary>The value folded so far.</summary>
    public readonly ReadOnlySpan<byte> Accumulated => _accumulator.AsSpan(0, _accumulatorLength);

    /// <summary>The values gathered so far (collect).</summary>
    public readonly ValueList Values => new(_values.AsSpan(0, _valuesLength), _valueEnds.AsSpan(0, _valueCount));

    /// <summary>Bytes readable from the start of <see cref="Accumulated"/>.</summary>
    public readonly int AccumulatorCapacity => _accumulator.Length;

    /// <summary>Holds <paramref name="key"/> with its first <paramref name="value"/>.</summary>
    public void Open(ReadOnlySpan<byte> key, ulong prefix, ReadOnlySpan<byte> value)
    {
        Hold(key, prefix);
        if (collect)
        {
            _valuesLength = 0;
            _valueCount = 0;
            Add(value);
        }
        else
        {
            SetAccumulator(value);
        }
    }

    /// <summary>Holds <paramref name="key"/>, whose values so far are already folded into the accumulator.</summary>
    public void Hold(ReadOnlySpan<byte> key, ulong prefix)
    {
        IsOpen = true;
        Prefix = prefix;
        EnsureCapacity(ref _key, key.Length);
        key.CopyTo(_key);
        _keyLength = key.Length;
    }

    /// <summary>The key is complete: the group closes (<see cref="Key"/> and the values stay readable until the next one).</summary>
    public void Close() => IsOpen = false;

    /// <summary>Starts the accumulator at <paramref name="value"/> (a key's first value).</summary>
    public void SetAccumulator(ReadOnlySpan<byte> value)
    {
        EnsureCapacity(ref _accumulator, value.Length);
        value.CopyTo(_accumulator);
        _accumulatorLength = value.Length;
    }

    /// <summary>Folds two values into the accumulator (the first fold of a key).</summary>
    public void FoldFirst(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right)
    {
        while (true)
        {
            if (job.TryCombine(key, left, right, _accumulator, out int written))
            {
                if ((uint)written > (uint)_accumulator.Length)
                {
                    throw new InvalidOperationException(
                        $"the combiner of job '{job.Name}' reported {written} bytes written into a {_accumulator.Length}-byte buffer");
                }
                _accumulatorLength = written;
                return;
            }
            if (_accumulator.Length >= RecordLimits.MaxValueBytes)
            {
                throw CombinedValueTooLarge(key);
            }
            _accumulator = new byte[Math.Min(RecordLimits.MaxValueBytes, Math.Max(_accumulator.Length * 2, left.Length + right.Length))];
        }
    }

    /// <summary>Folds <paramref name="value"/> into the accumulator.</summary>
    public void Fold(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        while (true)
        {
            if (job.TryCombine(key, _accumulator.AsSpan(0, _accumulatorLength), value, _scratch, out int written))
            {
                if ((uint)written > (uint)_scratch.Length)
                {
                    throw new InvalidOperationException(
                        $"the combiner of job '{job.Name}' reported {written} bytes written into a {_scratch.Length}-byte buffer");
                }
                (_accumulator, _scratch) = (_scratch, _accumulator);
                _accumulatorLength = written;
                return;
            }
            if (_scratch.Length >= RecordLimits.MaxValueBytes)
            {
                throw CombinedValueTooLarge(key);
            }
            _scratch = new byte[Math.Min(RecordLimits.MaxValueBytes, Math.Max(_scratch.Length * 2, _accumulatorLength + value.Length))];
        }
    }

    /// <summary>Gathers <paramref name="value"/> after those gathered (collect).</summary>
    public void Add(ReadOnlySpan<byte> value)
    {
        EnsureCapacity(ref _values, _valuesLength + value.Length);
        value.CopyTo(_values.AsSpan(_valuesLength));
        _valuesLength += value.Length;
        if (_valueCount == _valueEnds.Length)
        {
            Array.Resize(ref _valueEnds, _valueEnds.Length * 2);
        }
        _valueEnds[_valueCount++] = _valuesLength;
    }

    private readonly RecordTooLargeException CombinedValueTooLarge(ReadOnlySpan<byte> key) =>
        new($"the combiner of job '{job.Name}' needs more than {RecordLimits.MaxValueBytes} bytes for one value "
          + $"(the value limit) for a {key.Length}-byte key");

    private static void EnsureCapacity(ref byte[] buffer, int length)
    {
        if (buffer.Length < length)
        {
            Array.Resize(ref buffer, Math.Max(buffer.Length * 2, length));
        }
    }
}

using System.Buffers.Binary;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.Tests.Support;

/// <summary>
/// Associative job over arbitrary binary records: input is a record stream-free format of "key TAB number" lines,
/// values are 8-byte big-endian numbers, the combiner sums. Used to drive the merger with any key bytes.
/// </summary>
public sealed class SumJob : IMapReduceJob
{
    public string Name => "test-sum";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        if (!TextFields.TrySplitKeyNumber(record, out var key, out ulong number))
        {
            output.CountMalformedRecord();
            return;
        }
        Span<byte> value = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(value, number);
        output.Emit(key, value);
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        CounterValues.TrySum64(left, right, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);
}

/// <summary>
/// Non-associative job whose reduce emits (key, count of values) followed by every value, so a test sees exactly
/// which values, in which order, reached the reducer.
/// </summary>
public sealed class ListValuesJob : IMapReduceJob
{
    public string Name => "test-list";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => false;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        int tab = record.IndexOf((byte)'\t');
        if (tab < 0)
        {
            output.CountMalformedRecord();
            return;
        }
        output.Emit(record[..tab], record[(tab + 1)..]);
    }

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output)
    {
        Span<byte> count = stackalloc byte[4];
        BinaryPrimitives.WriteInt32BigEndian(count, values.Count);
        output.Emit(key, count);
        foreach (var value in values)
        {
            output.Emit(key, value);
        }
    }
}

/// <summary>Keys ordered by descending bytes: exercises the job-defined comparer path (no prefix shortcut).</summary>
public sealed class DescendingKeys : IKeyComparer
{
    public int Compare(ReadOnlySpan<byte> x, ReadOnlySpan<byte> y) => y.SequenceCompareTo(x);
}

/// <summary><see cref="SumJob"/> with descending key order.</summary>
public sealed class DescendingSumJob : IMapReduceJob
{
    private readonly SumJob _inner = new();

    public string Name => "test-sum-descending";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public IKeyComparer? KeyComparer { get; } = new DescendingKeys();

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output) => _inner.Map(record, output);

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        CounterValues.TrySum64(left, right, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);
}

/// <summary>A job loaded by type name from this test assembly's file (JobRegistry test). Option "scale" multiplies counts.</summary>
public sealed class UserScaledCountJob : IMapReduceJob
{
    public UserScaledCountJob(IReadOnlyDictionary<string, string> options)
    {
        Scale = options.TryGetValue("scale", out var text) ? ulong.Parse(text, System.Globalization.CultureInfo.InvariantCulture) : 1;
    }

    public ulong Scale { get; }

    public string Name => "user-scaled-count";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        Span<byte> value = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(value, Scale);
        output.Emit(record, value);
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        CounterValues.TrySum64(left, right, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);
}

/// <summary>A job type without a usable constructor, for the registry's error message.</summary>
public sealed class JobWithoutUsableConstructor(int unused) : IMapReduceJob
{
    public int Unused { get; } = unused;

    public string Name => "bad";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => false;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
    }

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output)
    {
    }
}

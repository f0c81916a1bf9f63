using System.Buffers;
using System.Buffers.Text;
using System.Globalization;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Top-k: input lines "item TAB score" (score a non-negative integer); the result is the k lines with the highest
/// score, ties broken by the item's bytes ascending (every input line is a candidate; an item on several lines
/// can appear several times). All records share the empty key and carry a <see cref="TopKList"/>: the map-side
/// combiner reduces each server's input to its k best, and every on-path vertex merges lists keeping the k best
/// (S = 0 in the paper's terms). One reduce task: every key goes to task 0. Bad lines are dropped and counted.
/// Option "k" (default 10, 1..10000).
/// </summary>
public sealed class TopKJob : IMapReduceJob
{
    public const string JobName = "topk";
    public const int DefaultK = 10;
    public const int MaxK = 10_000;

    public TopKJob(int k = DefaultK)
    {
        if (k is < 1 or > MaxK)
        {
            throw new ArgumentOutOfRangeException(nameof(k), k, $"k must be between 1 and {MaxK}");
        }
        K = k;
    }

    /// <summary>Constructor used by the job registry; reads option "k".</summary>
    public TopKJob(IReadOnlyDictionary<string, string> options)
        : this(ParseK(options))
    {
    }

    public int K { get; }

    public string Name => JobName;

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public bool ReduceIsIdentity => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        if (!TextFields.TrySplitKeyNumber(record, out var item, out ulong score))
        {
            output.CountMalformedRecord();
            return;
        }
        int length = TopKList.EntryLength(item.Length);
        byte[]? rented = length > 512 ? ArrayPool<byte>.Shared.Rent(length) : null;
        Span<byte> entry = rented is null ? stackalloc byte[512] : rented;
        int written = TopKList.WriteEntry(entry, score, item);
        output.Emit(ReadOnlySpan<byte>.Empty, entry[..written]);
        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        TopKList.TryMerge(left, right, K, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);

    public int Partition(ReadOnlySpan<byte> key, int reduceTasks) => 0;

    /// <summary>Writes the ranked list as "item TAB score" lines, best first.</summary>
    public void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output)
    {
        while (!value.IsEmpty)
        {
            int length = TopKList.ReadEntry(value, out ulong score, out var item);
            var span = output.GetSpan(item.Length + 22);
            item.CopyTo(span);
            span[item.Length] = (byte)'\t';
            Utf8Formatter.TryFormat(score, span[(item.Length + 1)..], out int digits);
            span[item.Length + 1 + digits] = (byte)'\n';
            output.Advance(item.Length + digits + 2);
            value = value[length..];
        }
    }

    private static int ParseK(IReadOnlyDictionary<string, string> options)
    {
        if (!options.TryGetValue("k", out var text))
        {
            return DefaultK;
        }
        return int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out int k)
            ? k
            : throw new ArgumentException($"topk option k='{text}' is not a positive integer", nameof(options));
    }
}

using System.Buffers;
using System.Buffers.Binary;
using Camdoop.Records;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Counts words. A word is a maximal run of ASCII letters and digits ([A-Za-z0-9]); every other byte, including
/// every byte of a non-ASCII UTF-8 character, separates words. Words are lower-cased (ASCII only). The value is an
/// 8-byte big-endian count; the combiner is a (saturating) sum. Output: "word TAB count" lines.
/// </summary>
public sealed class WordCountJob : IMapReduceJob
{
    public const string JobName = "wordcount";

    private const int StackWordBytes = 256;

    public string Name => JobName;

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public bool ReduceIsIdentity => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        Span<byte> one = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(one, 1);
        Span<byte> small = stackalloc byte[StackWordBytes];
        int i = 0;
        while (i < record.Length)
        {
            while (i < record.Length && !IsWordByte(record[i]))
            {
                i++;
            }
            int start = i;
            while (i < record.Length && IsWordByte(record[i]))
            {
                i++;
            }
            int length = i - start;
            if (length == 0)
            {
                break;
            }
            if (length > RecordLimits.MaxKeyBytes)
            {
                throw new RecordTooLargeException("wordcount map", length, one.Length);
            }
            byte[]? rented = length > StackWordBytes ? ArrayPool<byte>.Shared.Rent(length) : null;
            Span<byte> word = rented is null ? small[..length] : rented.AsSpan(0, length);
            var source = record.Slice(start, length);
            for (int j = 0; j < length; j++)
            {
                byte b = source[j];
                word[j] = (uint)(b - 'A') < 26 ? (byte)(b | 0x20) : b;
            }
            output.Emit(word, one);
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        CounterValues.TrySum64(left, right, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);

    public void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output) =>
        CounterValues.FormatKeyCount(key, CounterValues.Read(value), output);

    /// <summary>ASCII letter or digit.</summary>
    public static bool IsWordByte(byte b) => (uint)(b - '0') < 10 || (uint)((b | 0x20) - 'a') < 26;
}

using System.Text.Unicode;
using Camdoop.Records;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Hadoop Streaming's record lines, what a streaming job's programs read and write: <c>key TAB value NEWLINE</c>. The
/// key is what comes before the first TAB and the value everything after it (more TABs included); a line without a
/// TAB is a key with an empty value. A trailing CR is dropped, as text input drops it. Lines written must be UTF-8
/// and their key and value within <see cref="RecordLimits"/>: they become records.
/// </summary>
public static class StreamingLines
{
    /// <summary>The longest line that can hold a record: key, TAB, value and a CR.</summary>
    public const int MaxLineBytes = RecordLimits.MaxKeyBytes + RecordLimits.MaxValueBytes + 2;

    /// <summary>Writes one record as a line.</summary>
    public static void Write(Stream output, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        ArgumentNullException.ThrowIfNull(output);
        output.Write(key);
        output.WriteByte((byte)'\t');
        output.Write(value);
        output.WriteByte((byte)'\n');
    }

    /// <summary>
    /// Splits a line a program wrote (without its newline) into key and value; null when it is a record, else what
    /// is wrong with it.
    /// </summary>
    public static string? Split(ReadOnlySpan<byte> line, out ReadOnlySpan<byte> key, out ReadOnlySpan<byte> value)
    {
        if (!line.IsEmpty && line[^1] == (byte)'\r')
        {
            line = line[..^1];
        }
        int tab = line.IndexOf((byte)'\t');
        key = tab < 0 ? line : line[..tab];
        value = tab < 0 ? default : line[(tab + 1)..];
        if (!Utf8.IsValid(line))
        {
            return "a line that is not UTF-8";
        }
        if (key.Length > RecordLimits.MaxKeyBytes)
        {
            return $"a {key.Length}-byte key (keys are at most {RecordLimits.MaxKeyBytes} bytes)";
        }
        if (value.Length > RecordLimits.MaxValueBytes)
        {
            return $"a {value.Length}-byte value (values are at most {RecordLimits.MaxValueBytes} bytes)";
        }
        return null;
    }
}

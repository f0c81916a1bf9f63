using Camdoop.Records;

namespace Camdoop.MapReduce.Jobs;

public enum InputKind
{
    /// <summary>'\n'-terminated lines; a trailing '\r' is removed; a last line without '\n' still counts.</summary>
    TextLines,

    /// <summary>Fixed-size binary records; a trailing partial record is an input error.</summary>
    FixedRecords,
}

/// <summary>How a map task splits its input into the records passed to <see cref="IMapReduceJob.Map"/>.</summary>
public readonly record struct InputFormat(InputKind Kind, int RecordSize)
{
    /// <summary>Longest text line accepted (16 MiB); a longer line fails the map task with a clear error.</summary>
    public const int MaxLineBytes = InputFormatLimits.MaxRecordBytes;

    public static InputFormat TextLines => new(InputKind.TextLines, 0);

    public static InputFormat Fixed(int recordSize) =>
        recordSize is > 0 and <= MaxLineBytes
            ? new(InputKind.FixedRecords, recordSize)
            : throw new ArgumentOutOfRangeException(nameof(recordSize), recordSize, "record size must be 1 byte to 16 MiB");

    public override string ToString() => Kind == InputKind.TextLines ? "text lines" : $"{RecordSize}-byte records";
}

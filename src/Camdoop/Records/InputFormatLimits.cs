namespace Camdoop.Records;

/// <summary>
/// Limits on a job's input records. One number for the chunk store, which checks dataset manifests and uploads
/// against it, and for map tasks, which split their input by it.
/// </summary>
public static class InputFormatLimits
{
    /// <summary>Longest input record, a text line or a record of a fixed-size dataset (16 MiB).</summary>
    public const int MaxRecordBytes = 16 * 1024 * 1024;
}

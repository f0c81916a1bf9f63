namespace Camdoop.MapReduce.Records;

/// <summary>A run file failed validation (header, length or payload checksum).</summary>
public sealed class CorruptRunFileException : IOException
{
    public CorruptRunFileException(string source, string problem) : base($"corrupt run file '{source}': {problem}")
    {
        FilePath = source;
    }

    public CorruptRunFileException()
    {
    }

    public CorruptRunFileException(string message) : base(message)
    {
    }

    public CorruptRunFileException(string message, Exception innerException) : base(message, innerException)
    {
    }

    /// <summary>The run file (or in-memory source) that failed.</summary>
    public string FilePath { get; } = "";
}

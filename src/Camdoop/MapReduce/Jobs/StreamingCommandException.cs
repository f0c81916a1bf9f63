namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// A streaming job's program failed: it could not start, exited with a non-zero code, or wrote output that is not
/// key TAB value lines within the record limits. The message is one line naming the program.
/// </summary>
public sealed class StreamingCommandException : Exception
{
    public StreamingCommandException()
    {
    }

    public StreamingCommandException(string message) : base(message)
    {
    }

    public StreamingCommandException(string message, Exception innerException) : base(message, innerException)
    {
    }
}

namespace Camdoop.Monitoring.Queries;

/// <summary>A query that cannot run: malformed, or naming a table or column that does not exist. The message is one line for the user.</summary>
public sealed class QueryException : Exception
{
    public QueryException(string message)
        : base(message)
    {
    }

    public QueryException()
    {
    }

    public QueryException(string message, Exception inner)
        : base(message, inner)
    {
    }
}

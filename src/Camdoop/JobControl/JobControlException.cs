namespace Camdoop.JobControl;

/// <summary>
/// A job that cannot be submitted, queried or killed as asked (a bad description, an unreachable server, an unknown
/// or finished job). The message is one line for the user; a front-end passes it on as its error reply.
/// </summary>
public sealed class JobControlException : Exception
{
    public JobControlException(string message)
        : base(message)
    {
    }

    public JobControlException()
    {
    }

    public JobControlException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

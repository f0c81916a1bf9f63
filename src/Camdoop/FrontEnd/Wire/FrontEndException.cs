namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// A front-end request that cannot be served (bad field, unknown dataset, replica write failed, ...), or, on the
/// client side, the front-end's error reply or an unreachable front-end. The message is one line for the user.
/// </summary>
public sealed class FrontEndException : Exception
{
    public FrontEndException(string message)
        : base(message)
    {
    }

    public FrontEndException()
    {
    }

    public FrontEndException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>The front-end went away in the middle of a request (its server died, or the connection broke).</summary>
    public bool ConnectionLost { get; init; }
}

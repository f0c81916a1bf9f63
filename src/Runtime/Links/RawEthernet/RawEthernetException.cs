namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>A raw-Ethernet link could not be opened or used; the message says why in one line.</summary>
public sealed class RawEthernetException : Exception
{
    public RawEthernetException(string message)
        : base(message)
    {
    }

    public RawEthernetException(string message, Exception inner)
        : base(message, inner)
    {
    }

    public RawEthernetException()
    {
    }

    /// <summary>The errno behind the failure, 0 when it was not a system call.</summary>
    public int Errno { get; init; }
}

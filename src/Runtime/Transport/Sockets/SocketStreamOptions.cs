namespace Camdoop.Runtime.Transport.Sockets;

/// <summary>How a server's kernel-socket streams behave.</summary>
public sealed record SocketStreamOptions
{
    /// <summary>Bytes a stream keeps written and not yet taken by the kernel (its user-space send buffer).</summary>
    public int SendBufferBytes { get; init; } = 1 << 20;

    /// <summary>Bytes read from a socket at a time and handed to the reader in one call.</summary>
    public int ReceiveChunkBytes { get; init; } = 64 * 1024;

    /// <summary>How long a stream keeps trying to connect (a peer's listener may not be up yet) before it fails.</summary>
    public TimeSpan ConnectTimeout { get; init; } = TimeSpan.FromSeconds(15);

    /// <summary>How long an accepted connection may take to send its preamble before it is dropped.</summary>
    public TimeSpan PreambleTimeout { get; init; } = TimeSpan.FromSeconds(10);

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(SendBufferBytes, 4096);
        ArgumentOutOfRangeException.ThrowIfLessThan(ReceiveChunkBytes, 512);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(ConnectTimeout, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(PreambleTimeout, TimeSpan.Zero);
    }
}

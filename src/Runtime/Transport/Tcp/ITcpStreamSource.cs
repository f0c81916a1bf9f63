namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>
/// The bytes a connection sends, from offset 0: the application appends (and says when it is done) and keeps every
/// byte until acknowledged, since any unacknowledged byte may have to be sent again.
/// </summary>
public interface ITcpStreamSource
{
    /// <summary>Bytes available so far.</summary>
    long Available { get; }

    /// <summary>No byte will follow <see cref="Available"/>.</summary>
    bool IsComplete { get; }

    /// <summary>Copies the bytes at <paramref name="offset"/> (below <see cref="Available"/>) into <paramref name="destination"/>.</summary>
    void Read(long offset, Span<byte> destination);

    /// <summary>Every byte before <paramref name="offset"/> has arrived: the source may forget it.</summary>
    void Acknowledged(long offset);
}

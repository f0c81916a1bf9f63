namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>Where a connection's bytes go at the receiver, in order, each once.</summary>
public interface ITcpStreamSink
{
    void OnData(ReadOnlySpan<byte> data);

    /// <summary>The sender's stream ended; every byte has been delivered.</summary>
    void OnEnd();
}

namespace Camdoop.Runtime.Transport.Streams;

/// <summary>The receiving end of a stream: bytes in order, each once, then the end.</summary>
public interface IStreamReader
{
    void OnData(ReadOnlySpan<byte> data);

    /// <summary>The sender ended the stream; every byte has been delivered.</summary>
    void OnEnd();
}

namespace Camdoop.Runtime.Transport.Streams;

/// <summary>
/// The sending end of a stream, written in place: take <see cref="WriteSpace"/>, fill some of it, <see cref="Commit"/>
/// what was filled. The transport keeps the bytes until the peer has them.
/// </summary>
public interface IOutboundByteStream
{
    /// <summary>Where the next bytes go; empty while the send buffer is full (<see cref="IStreamWriter.OnWritable"/> follows).</summary>
    Span<byte> WriteSpace();

    /// <summary>The first <paramref name="count"/> bytes of the last <see cref="WriteSpace"/> are the stream's next bytes.</summary>
    void Commit(int count);

    /// <summary>No byte follows.</summary>
    void End();
}

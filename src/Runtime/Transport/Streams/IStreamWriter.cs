namespace Camdoop.Runtime.Transport.Streams;

/// <summary>The sending end's owner.</summary>
public interface IStreamWriter
{
    /// <summary><paramref name="stream"/> has room again after <see cref="IOutboundByteStream.WriteSpace"/> came back empty.</summary>
    void OnWritable(IOutboundByteStream stream);

    /// <summary>Every byte and the end of <paramref name="stream"/> have been delivered.</summary>
    void OnDelivered(IOutboundByteStream stream);
}

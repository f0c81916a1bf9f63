using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Transport.Streams;

/// <summary>Takes the streams other servers open.</summary>
public interface IStreamAcceptor
{
    /// <summary>The reader for a new stream from <paramref name="peer"/>, or null to refuse it.</summary>
    IStreamReader? Accept(Coordinate peer);
}

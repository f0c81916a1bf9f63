using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Transport.Streams;

/// <summary>
/// Reliable, in-order byte streams between servers: what an application needs of TCP, and nothing of how it is
/// done. The simulator's implementation is the packet-level <see cref="Tcp.TcpService"/>
/// (<see cref="Tcp.TcpStreamTransport"/>); a real server's would be kernel sockets. Everything happens on the node's
/// event loop: calls are made on it and callbacks come on it, never re-entrantly from a call.
/// </summary>
public interface IStreamTransport
{
    /// <summary>Streams other servers open to this one are offered to <paramref name="acceptor"/>.</summary>
    void Listen(IStreamAcceptor acceptor);

    /// <summary>Opens a stream to <paramref name="peer"/>; <paramref name="writer"/> hears when it can take more bytes.</summary>
    IOutboundByteStream Open(Coordinate peer, IStreamWriter writer);
}

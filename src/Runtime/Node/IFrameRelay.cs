using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>
/// Relays frames addressed to another server below the services, as a kernel forwards between interfaces: a server
/// that lends its uplink to a directly cabled neighbour (GRIN) hands such frames on without any service seeing them.
/// </summary>
public interface IFrameRelay
{
    /// <summary>
    /// The port a frame for another server, received on <paramref name="arrival"/>, leaves on; false drops it
    /// (counted as a forwarding drop).
    /// </summary>
    bool TryRoute(in FrameHeader header, ReadOnlySpan<byte> frame, Port arrival, out Port port);
}

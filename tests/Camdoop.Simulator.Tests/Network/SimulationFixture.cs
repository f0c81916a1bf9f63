using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Network;

internal static class SimulationFixture
{
    public static readonly Torus Cube = new(3, 3, 3);

    public static SimulationOptions Options(Torus? torus = null, ulong seed = 1) => new() { Torus = torus ?? Cube, Seed = seed };

    /// <summary>Sends one frame from <paramref name="from"/> on <paramref name="port"/> for service <paramref name="service"/>.</summary>
    public static SendStatus SendNow(Simulation sim, Coordinate from, Port port, byte service, ReadOnlySpan<byte> payload)
    {
        var host = sim.Host(from);
        var header = new FrameHeader(service, from, sim.Torus.Neighbour(from, port));
        return host.TrySend(port, ref header, default, payload);
    }

    public static T Service<T>(Simulation sim, Coordinate c)
        where T : class, IService => sim.Host(c).GetService<T>() ?? throw new InvalidOperationException($"{typeof(T).Name} is not on {c}");
}

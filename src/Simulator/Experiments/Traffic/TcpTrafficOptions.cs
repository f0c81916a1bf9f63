using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments.Traffic;

/// <summary>TCP flows across a simulated switched network, all starting at time 0.</summary>
public sealed record TcpTrafficOptions
{
    /// <summary>Names the servers (x * y * z of them).</summary>
    public required Torus Torus { get; init; }

    public required SwitchedNetworkOptions Network { get; init; }

    public TcpOptions Tcp { get; init; } = new();

    public required IReadOnlyList<TcpFlow> Flows { get; init; }

    public long LinkRateBitsPerSecond { get; init; } = 1_000_000_000;

    public int Threads { get; init; } = 1;

    /// <summary>The energy model the network's ports account under (null: not measured).</summary>
    public EnergyModel? Energy { get; init; }

    /// <summary>Whether every byte carries a pattern the receiver checks (off for speed measurements).</summary>
    public bool CheckBytes { get; init; } = true;

    public ulong Seed { get; init; } = 1;

    /// <summary>Virtual time after which a run gives up.</summary>
    public long TimeLimit { get; init; } = 600L * 1_000_000_000;
}

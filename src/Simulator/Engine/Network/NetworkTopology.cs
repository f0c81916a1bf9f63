using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Network;

/// <summary>
/// One way of wiring the simulated servers: its name, the switches and cables it builds (the routes follow from them,
/// <see cref="SwitchFabric"/>), the hosts it adds beside the servers, and what the experiments and the command line
/// ask of it. One instance per <see cref="NetworkKind"/> (<see cref="NetworkKinds.Topology"/>), without state: a
/// network's parameters are its <see cref="SwitchedNetworkOptions"/>. The defaults are a switched network's, whose
/// servers' NICs are cabled to switches; the torus (<see cref="TorusTopology"/>) is the one without a switch.
/// </summary>
public abstract class NetworkTopology
{
    private protected NetworkTopology()
    {
    }

    public abstract NetworkKind Kind { get; }

    /// <summary>Its name on the command line (--network) and in reports, CSV and JSON.</summary>
    public abstract string Name { get; }

    /// <summary>What it is, in a few words (the command line's help).</summary>
    public abstract string Description { get; }

    /// <summary>
    /// Whether every server is cabled to its six torus neighbours, with no switch: the CamCube, whose trees the Camdoop
    /// modes run on. Otherwise the servers' NICs are cabled to switches and TCP Camdoop runs on it.
    /// </summary>
    public virtual bool HasTorusLinks => false;

    /// <summary>
    /// Whether servers' free ports are cabled to each other (GRIN): <see cref="SwitchedNetworkOptions.FreePorts"/> of
    /// them, each server's one NIC being the port left.
    /// </summary>
    public virtual bool CablesFreePorts => false;

    /// <summary>
    /// Whether aggregation appliances (NetAgg's agg boxes) are hosts after the servers. They are its aggregation: the
    /// servers aggregate no further among themselves, and the boxes are what can fail besides the servers.
    /// </summary>
    public virtual bool HasAggBoxes => false;

    /// <summary>
    /// Whether its switches choose among equal-cost paths per connection (a 5-tuple hash) rather than per host pair:
    /// NetAgg's boxes exchange several trees' streams between the same two hosts, which the paper spreads over the
    /// network's paths.
    /// </summary>
    internal virtual bool EcmpPerConnection => false;

    /// <summary>
    /// Whether its servers sit in racks that share uplinks to a core (<see cref="SwitchedNetworkOptions.Oversubscription"/>):
    /// the oversubscribed switch bound is then the one to hold its runs against.
    /// </summary>
    public virtual bool HasOversubscribedRacks => false;

    /// <summary>The network's name in reports: its <see cref="Name"/>, and any parameter that tells its runs apart.</summary>
    public virtual string Label(SwitchedNetworkOptions options) => Name;

    /// <summary>Whether <paramref name="label"/> is one of its <see cref="Label"/>s: how a report's network is read back.</summary>
    public virtual bool HasLabel(string label) => label == Name;

    /// <summary>
    /// Links on the longest path between two of <paramref name="hosts"/>, at most: how far a coordinator's word
    /// travels. A switched network's is six, a fat tree's (server, edge, aggregation, core, aggregation, edge, server).
    /// </summary>
    public virtual int DiameterBound(Torus hosts) => 6;

    /// <summary>
    /// Consecutive servers that share a switch, the racks of <c>Aggregation.Rack</c>: every server on a single switch
    /// (one rack: the direct shuffle).
    /// </summary>
    public virtual int RackSize(SwitchedNetworkOptions options, int servers) => servers;

    /// <summary>Where its agg boxes are (<see cref="HasAggBoxes"/>), or null on a network without them.</summary>
    public virtual NetAggLayout? AggBoxes(SwitchedNetworkOptions options, int servers) => null;

    /// <summary>
    /// Adds its switches and cables for <paramref name="servers"/> servers (<see cref="FabricBuilder.Hosts"/> counts
    /// them and any appliances after them); <see cref="SwitchFabric"/> finds the routes.
    /// </summary>
    internal abstract void Cable(FabricBuilder fabric, SwitchedNetworkOptions options, int servers);
}

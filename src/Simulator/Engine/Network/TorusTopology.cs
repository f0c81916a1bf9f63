using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Network;

/// <summary>
/// The CamCube: every server cabled to its six torus neighbours, no switch. Its cables are the torus's own, which
/// <see cref="Simulation"/> lays from <see cref="Torus.Neighbour"/> when there is no switched network, so it builds
/// no fabric: no <see cref="SwitchedNetworkOptions"/> names it.
/// </summary>
public sealed class TorusTopology : NetworkTopology
{
    internal TorusTopology()
    {
    }

    public override NetworkKind Kind => NetworkKind.Torus;

    public override string Name => "torus";

    public override string Description => "the CamCube";

    public override bool HasTorusLinks => true;

    public override int DiameterBound(Torus hosts) => hosts.Diameter;

    internal override void Cable(FabricBuilder fabric, SwitchedNetworkOptions options, int servers) =>
        throw new ArgumentException("not a switched network", nameof(options));
}

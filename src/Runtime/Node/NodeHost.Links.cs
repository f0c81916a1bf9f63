using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

// Link state: a link is up when its carrier is up and the neighbour has been heard recently.
public sealed partial class NodeHost
{
    private readonly bool[] _linkUp = new bool[Ports.Count];

    public bool IsLinkUp(Port port) => _linkUp[(int)port];

    public bool HasCarrier(Port port) => _links[(int)port]?.CarrierUp == true;

    /// <summary>Whether <paramref name="serviceId"/> may send on <paramref name="port"/>: beacons go out on any link with carrier.</summary>
    private bool CanCarry(Port port, byte serviceId) =>
        serviceId == WellKnownServices.LinkMonitor ? HasCarrier(port) : _linkUp[(int)port];

    private void InitialiseLinkStates()
    {
        foreach (var port in Ports.All)
        {
            _linkUp[(int)port] = _options.AssumeLinksUpAtStart && HasCarrier(port);
        }
    }

    public void OnCarrierChanged(Port port, bool up)
    {
        if (_halted)
        {
            return;
        }
        if (!up)
        {
            SetLinkState(port, false);
        }
        else
        {
            Monitor.CarrierReturned(port);
        }
    }

    /// <summary>Changes the state of a link and tells every service, in registration order.</summary>
    internal void SetLinkState(Port port, bool up)
    {
        if (_linkUp[(int)port] == up)
        {
            return;
        }
        _linkUp[(int)port] = up;
        if (!up)
        {
            FlushPort(port);
        }
        Log(LogLevel.Info, $"link {port.Name()} to {Torus.Neighbour(Self, port)} is {(up ? "up" : "down")}");
        foreach (var s in _serviceOrder)
        {
            Guard(s, static (svc, state) => svc.OnLinkChanged(state.port, state.up), (port, up));
        }
    }
}

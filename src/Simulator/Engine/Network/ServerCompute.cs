using Camdoop.Runtime.Node;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

/// <summary>
/// One host's event-loop core when its compute is priced (<see cref="SimulationOptions.Compute"/>, or an agg box's): when it is free
/// again, and the server's events that fell due while it was busy, in the order they fell due. Touched only by the
/// partition that owns the server.
/// </summary>
internal sealed class ServerCompute(ComputeRates rates)
{
    private readonly long[] _busyByKind = new long[3];

    /// <summary>What this core's work costs: the servers' rates, or an appliance's own.</summary>
    public ComputeRates Rates { get; } = rates;

    /// <summary>Virtual time at which the work charged so far ends.</summary>
    public long BusyUntil { get; private set; }

    /// <summary>Events of this server waiting for the core (a wake-up event is due whenever it is not empty).</summary>
    public Queue<SimEvent> Backlog { get; } = new();

    /// <summary>Nanoseconds of work charged, all kinds.</summary>
    public long BusyTotal { get; private set; }

    public long BusyOf(ComputeWork kind) => _busyByKind[(int)kind];

    /// <summary>Nanoseconds charged for receiving frames (<see cref="ComputeRates.FrameNanoseconds"/>).</summary>
    public long FrameBusy { get; private set; }

    public bool IsBusy(long now) => BusyUntil > now || Backlog.Count > 0;

    public void Charge(long now, ComputeWork kind, long costNs)
    {
        Occupy(now, costNs);
        _busyByKind[(int)kind] += costNs;
    }

    /// <summary>The core handles one received frame (<see cref="ComputeRates.FrameNanoseconds"/>).</summary>
    public void ChargeFrame(long now)
    {
        long cost = Rates.FrameNanoseconds;
        Occupy(now, cost);
        FrameBusy += cost;
    }

    /// <summary>The core is busy <paramref name="costNs"/> more, from now or from the end of the work before.</summary>
    private void Occupy(long now, long costNs)
    {
        BusyUntil = Math.Max(BusyUntil, now) + costNs;
        BusyTotal += costNs;
    }
}

using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

/// <summary>
/// Work a service declares occupies its server's core when compute is priced: later events of that server wait for
/// it, frames it sends leave when the work ends, other servers are not held up, and without rates nothing changes.
/// </summary>
public class ComputeCostTests
{
    private const byte Probe = 20;

    // 1 Gbit/s of reduce: 1,000 bytes take 8 us.
    private static readonly ComputeRates Slow = new()
    {
        MapBitsPerSecond = 1e9,
        MergeBitsPerSecond = 2e9,
        ReduceBitsPerSecond = 1e9,
    };

    [Fact]
    public void AFrameSentAfterWorkLeavesWhenTheWorkEnds()
    {
        long at = SimTime.Millisecond;
        var from = new Coordinate(0, 0, 0);
        using var sim = new Simulation(Options() with { Compute = Slow }, h =>
        {
            h.Register(new SinkService(Probe, recordArrivals: true));
            if (h.Self == from)
            {
                h.Register(new WorkingService(at, ComputeWork.Reduce, 125_000, Port.XPlus, Probe));
            }
        });
        sim.Start();
        sim.RunUntil(3 * SimTime.Millisecond);

        long work = 125_000 * 8; // ns at 1 Gbit/s
        int frameLength = FrameLayout.HeaderSize + 1000;
        long expected = at + work + ((frameLength + 24) * 8) + 500 + 10_000;
        var arrival = Assert.Single(Service<SinkService>(sim, new Coordinate(1, 0, 0)).Arrivals);
        Assert.Equal(expected, arrival.Time);
        // The timer due 1 ns after the work began waited for the core.
        Assert.Equal(at + work, Service<WorkingService>(sim, from).LateTimerFiredAt);
        Assert.Equal(work, sim.ComputeBusy(sim.Torus.IndexOf(from)));
        Assert.Equal(work, sim.ComputeBusy(sim.Torus.IndexOf(from), ComputeWork.Reduce));
    }

    [Fact]
    public void EachKindTakesItsOwnRate()
    {
        var rates = Slow with { MapCores = 4 };
        Assert.Equal(16_000, rates.CostNs(ComputeWork.Reduce, 2_000));
        Assert.Equal(8_000, rates.CostNs(ComputeWork.Merge, 2_000));
        Assert.Equal(4_000, rates.CostNs(ComputeWork.Map, 2_000)); // four map cores at 1 Gbit/s each
    }

    [Fact]
    public void FramesArrivingAtABusyServerWaitAndKeepTheirOrder()
    {
        long at = SimTime.Millisecond;
        var busy = new Coordinate(1, 0, 0);
        var sender = new Coordinate(0, 0, 0);
        using var sim = new Simulation(Options() with { Compute = Slow }, h =>
        {
            h.Register(new SinkService(Probe, recordArrivals: true));
            if (h.Self == busy)
            {
                // Busy from 1 ms for 1 ms.
                h.Register(new WorkingService(at, ComputeWork.Reduce, 125_000));
            }
        });
        sim.Start();
        sim.Schedule(at + 100 * SimTime.Microsecond, () =>
        {
            var payload = new byte[100];
            for (int i = 0; i < 3; i++)
            {
                payload[3] = (byte)i;
                Assert.Equal(SendStatus.Queued, SendNow(sim, sender, Port.XPlus, Probe, payload));
            }
        });
        sim.RunUntil(3 * SimTime.Millisecond);

        var arrivals = Service<SinkService>(sim, busy).Arrivals;
        Assert.Equal([0, 1, 2], arrivals.Select(a => a.Sequence));
        // All three reached the NIC long before 2 ms and were handled when the core came free, in order.
        Assert.All(arrivals, a => Assert.Equal(at + (125_000 * 8), a.Time));
    }

    [Fact]
    public void ZeroCostWorkChangesNothing()
    {
        var free = new ComputeRates { MapBitsPerSecond = 1e30, MergeBitsPerSecond = 1e30, ReduceBitsPerSecond = 1e30 };
        var without = TracedRun(compute: null);
        var with = TracedRun(free);
        Assert.Equal(without.Hash, with.Hash);
        Assert.Equal(without.Events, with.Events);
        Assert.Equal(without.Arrival, with.Arrival);
    }

    private static (ulong Hash, long Events, long Arrival) TracedRun(ComputeRates? compute)
    {
        var from = new Coordinate(0, 0, 0);
        using var sim = new Simulation(Options() with { Compute = compute, TraceEvents = true }, h =>
        {
            h.Register(new SinkService(Probe, recordArrivals: true));
            h.Register(new WorkingService(SimTime.Millisecond, ComputeWork.Merge, 125_000, Port.YPlus, Probe));
        });
        sim.Start();
        sim.RunUntil(3 * SimTime.Millisecond);
        var arrival = Assert.Single(Service<SinkService>(sim, new Coordinate(0, 1, 0)).Arrivals);
        return (sim.Trace!.Hash, sim.EventsProcessed, arrival.Time);
    }
}

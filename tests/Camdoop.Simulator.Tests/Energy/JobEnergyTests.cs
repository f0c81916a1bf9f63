using Camdoop.Experiments;
using Camdoop.Experiments.Traffic;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;

namespace Camdoop.Simulator.Tests.Energy;

/// <summary>Energy on real jobs and real traffic: the models' order, times left alone, threads, and switched networks.</summary>
public class JobEnergyTests
{
    private static JobSimulationOptions WordCount(EnergyModel? energy, int threads = 1) => Job(Workload.WordCount, 20_000, energy, threads);

    private static JobSimulationOptions Job(Workload workload, long bytesPerServer, EnergyModel? energy, int threads = 1) => new()
    {
        Torus = new Torus(3, 3, 3),
        Workload = workload,
        Settings = new SimulationSettings { BytesPerServer = bytesPerServer, Verify = true, Energy = energy },
        ReduceTasks = 1,
        Mode = ShuffleMode.Camdoop,
        MapParallelism = 1,
        SimulationThreads = threads,
    };

    // A sort: its shuffle, unlike a word count's, is not so short that EEE's wake-ups dominate it (EEE lengthens a
    // shuffle of a few hundred microseconds by more than half, and can then spend more than legacy in all).
    [Fact]
    public void OnARealJobIdealIsNeverAboveEeeNorEeeAboveLegacy()
    {
        JobSimulationResult Sort(EnergyModel? model) => JobSimulation.Run(Job(Workload.Sort, 100_000, model));
        var none = Sort(null);
        var legacy = Sort(EnergyModel.Legacy);
        var eee = Sort(EnergyModel.Eee);
        var coalesced = Sort(EnergyModel.Parse("eee:120us100"));
        var ideal = Sort(EnergyModel.Ideal);
        foreach (var r in new[] { none, legacy, eee, coalesced, ideal })
        {
            Assert.True(r.Completed, string.Join("; ", r.Errors));
            Assert.True(r.Verified, r.VerificationError);
        }
        Assert.Null(none.Energy);
        // Legacy and ideal change no time; EEE's wake-ups can only delay.
        Assert.Equal(none.ShuffleReduceSeconds, legacy.ShuffleReduceSeconds);
        Assert.Equal(none.ShuffleReduceSeconds, ideal.ShuffleReduceSeconds);
        Assert.True(eee.ShuffleReduceSeconds >= none.ShuffleReduceSeconds);

        // Legacy: 162 torus ports at 0.5 W for the whole job.
        Assert.Equal(162, legacy.Energy!.Ports);
        Assert.Equal(0.5 * 162 * none.ShuffleReduceSeconds, legacy.Energy.Joules, 9);
        Assert.Equal(legacy.Energy.Joules, legacy.Energy.ByKind.TorusLinks, 12);
        Assert.Equal(0, legacy.Energy.ByKind.SwitchPorts);
        Assert.Equal(0, legacy.Energy.LowPowerShare);

        // Per second of job, so that EEE's longer run does not count against it.
        double PerSecond(JobSimulationResult r) => r.Energy!.Joules / r.Energy.Seconds;
        Assert.True(PerSecond(ideal) <= PerSecond(eee), $"ideal {PerSecond(ideal)} W, eee {PerSecond(eee)} W");
        Assert.True(PerSecond(eee) <= PerSecond(legacy), $"eee {PerSecond(eee)} W, legacy {PerSecond(legacy)} W");
        Assert.True(PerSecond(ideal) <= PerSecond(coalesced) && PerSecond(coalesced) <= PerSecond(legacy));
        Assert.True(ideal.Energy!.Joules <= eee.Energy!.Joules && eee.Energy.Joules <= legacy.Energy.Joules);
        Assert.True(eee.Energy.Wakes > 0);
        Assert.Equal("eee:120us100", coalesced.Energy!.Model);
    }

    [Theory]
    [InlineData("eee")]
    [InlineData("eee:12us10")]
    public void ThreadsChangeNeitherEnergyNorTimes(string model)
    {
        var one = JobSimulation.Run(WordCount(EnergyModel.Parse(model), threads: 1));
        var three = JobSimulation.Run(WordCount(EnergyModel.Parse(model), threads: 3));
        Assert.True(one.Verified, one.VerificationError);
        Assert.True(three.Verified, three.VerificationError);
        Assert.Equal(one.ShuffleReduceSeconds, three.ShuffleReduceSeconds);
        Assert.Equal(one.Reducers, three.Reducers);
        Assert.Equal(one.LinkFrames, three.LinkFrames);
        Assert.Equal(one.Energy, three.Energy);
    }

    private static (ulong Hash, long Events) TracedRun(EnergyModel? energy)
    {
        var torus = new Torus(3, 3, 2);
        var options = new SimulationOptions { Torus = torus, Seed = 7, TraceEvents = true, LossRate = 0.01, Energy = energy };
        using var sim = new Simulation(options);
        sim.Configure(h => h.Register(new RandomTrafficService(sim.Random.Fork((ulong)torus.IndexOf(h.Self)))));
        sim.Start();
        sim.FailLink(new Coordinate(1, 1, 0), Port.YPlus, 4 * SimTime.Millisecond);
        sim.RunUntil(12 * SimTime.Millisecond);
        return (sim.Trace!.Hash, sim.EventsProcessed);
    }

    [Fact]
    public void LegacyAndIdealRunsAreTheRunWithoutEnergyEventForEvent()
    {
        var none = TracedRun(null);
        Assert.Equal(none, TracedRun(EnergyModel.Legacy));
        Assert.Equal(none, TracedRun(EnergyModel.Ideal));
        // EEE's wake-ups do move events.
        Assert.NotEqual(none.Hash, TracedRun(EnergyModel.Eee).Hash);
    }

    private static NetworkEnergy SwitchedIncast(EnergyModel model, NetworkKind kind)
    {
        using var traffic = new TcpTraffic(new TcpTrafficOptions
        {
            Torus = new Torus(3, 3, 2),
            Network = new SwitchedNetworkOptions { Kind = kind },
            Flows = TcpFlow.Incast(18, 0, 200_000),
            Energy = model,
        });
        var result = traffic.Run();
        Assert.True(result.AllDone);
        Assert.Equal(0, result.CorruptBytes);
        return traffic.Simulation.MeasureEnergy(result.Duration);
    }

    [Theory]
    [InlineData(NetworkKind.Switch, 36)]
    [InlineData(NetworkKind.FatTree, 0)]
    public void SwitchedNetworksSplitTheirEnergyBetweenNicsAndSwitchPorts(NetworkKind kind, int ports)
    {
        var legacy = SwitchedIncast(EnergyModel.Legacy, kind);
        var eee = SwitchedIncast(EnergyModel.Eee, kind);
        var ideal = SwitchedIncast(EnergyModel.Ideal, kind);
        if (ports > 0)
        {
            Assert.Equal(ports, legacy.Ports);
        }
        foreach (var e in new[] { legacy, eee, ideal })
        {
            Assert.Equal(0, e.ByKind.TorusLinks);
            Assert.True(e.ByKind.ServerNics > 0 && e.ByKind.SwitchPorts > 0);
            Assert.Equal(e.Joules, e.ByKind.ServerNics + e.ByKind.SwitchPorts, 12);
        }
        // One NIC per server: as many NIC ports as servers, at full power all along under legacy.
        Assert.Equal(18 * 0.5 * legacy.Seconds, legacy.ByKind.ServerNics, 9);
        Assert.True(ideal.Joules / ideal.Seconds <= eee.Joules / eee.Seconds);
        Assert.True(eee.Joules / eee.Seconds <= legacy.Joules / legacy.Seconds);
    }
}

using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Monitoring.Tables;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>The monitoring frames: what a server writes it reads back; anything else is dropped and counted.</summary>
public sealed class MonitorWireTests
{
    private static readonly Torus Cube = new(3, 3, 3);
    private static readonly RoundId Id = new(new Coordinate(1, 2, 0), 7, 3);

    [Fact]
    public void ResultsSplitOverFramesAndReadBack()
    {
        var rows = Enumerable.Range(0, 2_000).Select(i => new QueryValue[] { $"{i % 3},{i % 5},0", i * 1.5, i % 7 == 0 ? QueryValue.Null : i }).ToList();
        var payloads = MonitorWire.Results(Id, 12, rows);
        Assert.True(payloads.Count > 1);
        Assert.All(payloads, p => Assert.InRange(p.Length, MonitorWire.ResultHeaderSize, FrameLayout.MaxPayload));
        var read = new List<QueryValue[]>();
        for (int i = 0; i < payloads.Count; i++)
        {
            Assert.True(MonitorWire.TryReadResult(payloads[i], Cube, 3, out var id, out int servers, out bool last, read));
            Assert.Equal(Id, id);
            Assert.Equal(i == payloads.Count - 1, last);
            Assert.Equal(last ? 12 : 0, servers);
        }
        Assert.Equal(rows.Select(r => string.Join("|", r)), read.Select(r => string.Join("|", r)));
    }

    [Fact]
    public void ARequestReadsBackAndADamagedOneDoesNot()
    {
        const string text = "select port, sum(bytes_sent) from links group by port every 1s";
        var payload = MonitorWire.Request(Id, combine: true, 800_000_000, text);
        Assert.True(MonitorWire.TryReadRequest(payload, Cube, out var id, out bool combine, out long budget, out string query));
        Assert.Equal((Id, true, 800_000_000L, text), (id, combine, budget, query));
        Assert.False(MonitorWire.TryReadRequest(payload.AsSpan(0, payload.Length - 1), Cube, out _, out _, out _, out _));
        var outside = (byte[])payload.Clone();
        outside[5] = 9; // root x = 9: not in a 3x3x3 cube
        Assert.False(MonitorWire.TryReadRequest(outside, Cube, out _, out _, out _, out _));
    }

    [Fact]
    public void TruncatedOrPaddedResultsAreRefusedWithoutRows()
    {
        var payload = MonitorWire.Results(Id, 4, [["a", 1], ["b", 2]]).Single();
        var rows = new List<QueryValue[]>();
        Assert.False(MonitorWire.TryReadResult(payload.AsSpan(0, payload.Length - 3), Cube, 2, out _, out _, out _, rows));
        Assert.False(MonitorWire.TryReadResult([.. payload, 0], Cube, 2, out _, out _, out _, rows));
        Assert.False(MonitorWire.TryReadResult(payload, Cube, 3, out _, out _, out _, rows));
        Assert.Empty(rows);
    }

    [Fact]
    public void GarbageFramesAreDroppedAndCountedAndTheServiceRunsOn()
    {
        using var sim = new Simulation(new SimulationOptions { Torus = Cube, Seed = 3 }, host => host.Register(new MonitorService(jobs: null)));
        sim.Start();
        sim.RunFor(5_000_000);
        var self = new Coordinate(1, 1, 1);
        var host = sim.Host(self);
        var monitor = host.GetService<MonitorService>()!;
        var random = new Random(11);
        List<byte[]> garbage = [[], [9, 9, 9], [MonitorWire.KindResult, 1, 2], MonitorWire.Request(Id, true, 1, "select nothing from nowhere every 1s")];
        for (int i = 0; i < 50; i++)
        {
            var bytes = new byte[random.Next(1, 200)];
            random.NextBytes(bytes);
            bytes[0] = (byte)random.Next(0, 3);
            garbage.Add(bytes);
        }
        foreach (var payload in garbage)
        {
            var frame = sim.Frames.Rent();
            var header = new FrameHeader(WellKnownServices.Monitoring, Cube.Neighbour(self, Port.XPlus), self);
            frame.Length = FrameCodec.Write(frame.Buffer, ref header, default, payload);
            host.OnFrameReceived(Port.XPlus, frame);
        }
        Assert.Equal(garbage.Count, monitor.Counters.Malformed + monitor.Counters.LateResults);
        Assert.True(monitor.Counters.Malformed > 0);
        // A well-formed result for a round nobody runs is late, not malformed.
        var late = MonitorWire.Results(new RoundId(self, 99, 1), 1, []).Single();
        var lateFrame = sim.Frames.Rent();
        var lateHeader = new FrameHeader(WellKnownServices.Monitoring, Cube.Neighbour(self, Port.XPlus), self);
        lateFrame.Length = FrameCodec.Write(lateFrame.Buffer, ref lateHeader, default, late);
        long before = monitor.Counters.LateResults;
        host.OnFrameReceived(Port.XPlus, lateFrame);
        Assert.Equal(before + 1, monitor.Counters.LateResults);

        QueryRound? round = null;
        sim.Schedule(sim.Now + 1_000_000, () => monitor.Ask(QueryParser.Parse("select count(*) from servers every 10ms"), r => round = r, rounds: 1));
        Assert.True(sim.RunUntil(() => round is not null, sim.Now + 100_000_000));
        Assert.Equal(Cube.Count, round!.Servers);
        Assert.Equal("27", round.Rows.Single()[0].ToString());
    }
}

using Camdoop.ChunkStore;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Monitoring.Tables;
using Camdoop.Records;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>
/// The storage table on a simulated cube running every server's stack: while a lost server's replicas are made
/// again, a cube-wide query shows each live server's chunk store as its own counters have it.
/// </summary>
public sealed class StorageTableTests : IDisposable
{
    private const long Ms = SimTime.Millisecond;
    private static readonly Torus Cube = new(3, 3, 3);

    // A short grace, and a copy rate so low that after each server's first copy the next waits for minutes: the
    // stores stand still with copies pending while the query runs, so its rows can equal the counters exactly.
    private static readonly ChunkStoreOptions Slow = new()
    {
        KeepReplicas = true,
        ReReplicateAfter = 3_000 * Ms,
        ReplicationStartDelay = 1_000 * Ms,
        ReplicationScanInterval = 600_000 * Ms,
        ReReplicateBytesPerSecond = 100,
    };

    private readonly string _data = Directory.CreateTempSubdirectory("camdoop-storage-table-").FullName;

    public void Dispose() => Directory.Delete(_data, recursive: true);

    [Fact]
    public void TheStorageTableHasOneRowPerLiveServerWithItsChunkStoresCounters()
    {
        using var sim = new Simulation(
            new SimulationOptions { Torus = Cube, Seed = 5, DataRoot = _data, Node = SimulationOptions.DefaultNodeOptions with { BeaconInterval = 50 * Ms } },
            host => ServerStack.OnTorus(host, new ServerStackOptions { ChunkStore = Slow }));
        sim.Start();
        ChunkStoreService Store(Coordinate c) => sim.Host(c).GetService<ChunkStoreService>()!;
        for (int i = 0; i < 60; i++)
        {
            var bytes = new byte[10_000 + (i * 31)];
            new Random(i).NextBytes(bytes);
            var meta = new ChunkMeta
            {
                Id = ChunkPlacement.ChunkId(Cube, "monitored", i, nonce: 3),
                Length = bytes.Length,
                Checksum = XxHash64.Hash(bytes),
                Dataset = "monitored",
                Index = i,
                Count = 60,
                DatasetBytes = bytes.Length,
            };
            WriteResult? written = null;
            Store(Cube.CoordinateOf(i % Cube.Count)).Write(meta, bytes, r => written = r);
            Assert.True(sim.RunUntil(() => written is not null, sim.Now + (60_000 * Ms)), "the write did not finish");
            Assert.True(written!.Ok, written.Error);
        }
        // A leaf of 0,0,0's query tree: every other server still answers.
        var lost = new Coordinate(1, 1, 1);
        var live = Cube.All().Where(s => s != lost).ToList();
        sim.FailServer(lost, sim.Now);
        Assert.True(sim.RunUntil(() => live.Sum(s => Store(s).Counters.ReplicasCopied) > 0, sim.Now + (60_000 * Ms)), "no replica was copied");
        // The offers that find a good replica cost no rate: let them finish, so that only paid-for copies wait.
        sim.RunUntil(sim.Now + (15_000 * Ms));

        var root = new Coordinate(0, 0, 0);
        QueryRound? round = null;
        const string text = "select server, replicas, copies_pending, bytes_copied from storage every 1s";
        sim.Schedule(sim.Now + Ms, () => sim.Host(root).GetService<MonitorService>()!.Ask(QueryParser.Parse(text), r => round = r, rounds: 1));
        Assert.True(sim.RunUntil(() => round is not null, sim.Now + (2_000 * Ms)), "no round");

        Assert.Equal(live.Count, round!.Servers);
        Assert.Equal(live.Select(s => s.Name).Order(), round.Rows.Select(r => r[0].Text!).Order());
        foreach (var row in round.Rows)
        {
            var store = Store(live.Single(s => s.Name == row[0].Text));
            Assert.Equal(store.Local.Count, row[1].Number);
            Assert.Equal(store.ReplicaCopiesPending, row[2].Number);
            Assert.Equal(store.Counters.ReplicaBytesCopied, row[3].Number);
        }
        // Not a cube of zeros: replicas are held, some were copied and others wait for the rate.
        Assert.All(round.Rows, r => Assert.True(r[1].Number > 0));
        Assert.True(round.Rows.Sum(r => r[2].Number) > 0, "no copy pending");
        Assert.True(round.Rows.Sum(r => r[3].Number) > 0, "no byte copied");

        // Every column, as each live server reads its own row.
        foreach (var server in live)
        {
            var store = Store(server);
            var c = store.Counters;
            var row = sim.Host(server).GetService<MonitorService>()!.ReadTable(MonitorTables.Storage).Single();
            var expected = new Dictionary<string, QueryValue>
            {
                ["server"] = server.Name,
                ["replicas"] = store.Local.Count,
                ["bytes_stored"] = store.Local.BytesStored,
                ["copies_pending"] = store.ReplicaCopiesPending,
                ["replicas_copied"] = c.ReplicasCopied,
                ["bytes_copied"] = c.ReplicaBytesCopied,
                ["replicas_confirmed"] = c.ReplicasConfirmed,
                ["replicas_dropped"] = c.ReplicasDropped,
                ["copies_failed"] = c.ReplicaCopiesFailed,
                ["servers_lost"] = 1,
                ["scrub_passes"] = c.ScrubPasses,
                ["scrubbed_replicas"] = c.ScrubChunks,
                ["scrubbed_bytes"] = c.ScrubBytes,
                ["corrupt_found"] = c.ScrubCorrupt,
                ["repaired"] = c.ScrubRepaired,
                ["unrepairable"] = c.ScrubUnrepairable,
                ["decommissioned"] = store.Decommissioned.Count(),
                ["tombstones"] = store.Tombstones.Count(),
            };
            Assert.Equal(expected.Keys, MonitorTables.Storage.Columns.Select(col => col.Name));
            Assert.Equal(expected.Values, row);
        }
    }
}

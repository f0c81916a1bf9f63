using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>
/// Decommissioning on a simulated 3x3x3 cube: once draining says safe, the server can be switched off with nothing
/// under-replicated and no copying left to do; recommissioning gives it its share back.
/// </summary>
public sealed class DecommissionTests : IDisposable
{
    private static readonly Torus Cube = new(3, 3, 3);
    private const long Ms = StoreCube.Ms;

    private static readonly ChunkStoreOptions Fast = StoreCube.KeepingReplicas;

    private readonly string _data = Directory.CreateTempSubdirectory("camdoop-decommission-").FullName;

    public void Dispose() => Directory.Delete(_data, recursive: true);

    [Fact]
    public void AfterDrainingSaysSafeSwitchingTheServerOffLeavesNothingUnderReplicated()
    {
        using var cube = new StoreCube(Cube, dataRoot: _data, options: Fast);
        var chunks = cube.Put("kept", chunks: 30);
        var origin = new Coordinate(0, 0, 0);
        var drained = Cube.All().Where(s => s != origin).OrderByDescending(s => chunks.Count(c => cube.Holders(c.Id).Contains(s))).First();
        Assert.NotEqual(0, chunks.Count(c => cube.Holders(c.Id).Contains(drained)));
        cube.Settle(1_500 * Ms);
        Assert.False(Drain(cube, origin, drained).Safe);

        var set = Decommission(cube, origin, drained, decommission: true);
        Assert.Empty(set.Unanswered);
        Assert.All(Cube.All(), s => Assert.Equal([drained], cube.Store(s).Decommissioned));
        DrainStatus status = Drain(cube, origin, drained);
        long deadline = cube.Sim.Now + (60_000 * Ms);
        while (!status.Safe && cube.Sim.Now < deadline)
        {
            cube.Settle(1_000 * Ms);
            status = Drain(cube, origin, drained);
        }
        Assert.True(status.Safe, $"{status.NotYetElsewhere} replicas not yet held three times elsewhere");

        // Switched off: every chunk already has three good replicas on the others, before any grace runs out.
        cube.Sim.FailServer(drained, cube.Sim.Now);
        cube.Settle(200 * Ms);
        var fsck = cube.Fsck(origin, "kept");
        Assert.NotNull(fsck.Report);
        Assert.Equal(0, fsck.Report!.UnderReplicated);
        Assert.Equal(0, fsck.Report.Missing);
        foreach (var c in chunks)
        {
            Assert.Equal(ChunkPlacement.Replicas, cube.Holders(c.Id).Count(s => s != drained));
        }
        // The decommissioned set outlives a restart.
        cube.Sim.FailServer(origin, cube.Sim.Now);
        cube.Settle(100 * Ms);
        cube.Sim.RestoreServer(origin, cube.Sim.Now);
        cube.Settle(100 * Ms);
        Assert.Equal([drained], cube.Store(origin).Decommissioned);
    }

    [Fact]
    public void ARecommissionedServerHoldsItsShareAgain()
    {
        using var cube = new StoreCube(Cube, dataRoot: _data, options: Fast);
        var chunks = cube.Put("kept", chunks: 30);
        var origin = new Coordinate(0, 0, 0);
        var server = new Coordinate(1, 2, 1);
        int share = chunks.Count(c => cube.Holders(c.Id).Contains(server));
        Assert.True(share > 0);
        cube.Settle(1_500 * Ms);
        Decommission(cube, origin, server, decommission: true);
        WaitUntil(cube, () => chunks.All(c => !cube.Holders(c.Id).Contains(server)), "the decommissioned server to hand over its replicas");
        // New writes leave it out as well.
        var later = cube.Put("later", chunks: 10, nonce: 9);
        Assert.All(later, c => Assert.DoesNotContain(server, cube.Holders(c.Id)));

        Assert.Empty(Decommission(cube, origin, server, decommission: false).Unanswered);
        var all = ServerSet.AllOf(Cube);
        WaitUntil(cube, () => chunks.Concat(later).All(c => cube.Holders(c.Id).OrderBy(s => s.Name).SequenceEqual(
            ChunkPlacement.Targets(KeyMapper.Shared(Cube), c.Id, all).OrderBy(s => s.Name))), "every chunk back at its three positions");
        Assert.Equal(share, chunks.Count(c => cube.Holders(c.Id).Contains(server)));
    }

    private static DecommissionResult Decommission(StoreCube cube, Coordinate from, Coordinate server, bool decommission)
    {
        DecommissionResult? result = null;
        cube.Store(from).SetDecommissioned([server], decommission, r => result = r);
        Assert.True(cube.Sim.RunUntil(() => result is not null, cube.Sim.Now + (30_000 * Ms)));
        return result!;
    }

    private static DrainStatus Drain(StoreCube cube, Coordinate from, Coordinate server)
    {
        DrainStatus? result = null;
        cube.Store(from).DrainStatusOf([server], r => result = r);
        Assert.True(cube.Sim.RunUntil(() => result is not null, cube.Sim.Now + (30_000 * Ms)));
        return result!;
    }

    private static void WaitUntil(StoreCube cube, Func<bool> done, string what)
    {
        long deadline = cube.Sim.Now + (60_000 * Ms);
        while (!done() && cube.Sim.Now < deadline)
        {
            cube.Settle(500 * Ms);
        }
        Assert.True(done(), what);
    }
}

using System.Diagnostics;
using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Tests.Support;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>
/// What an acknowledged replica promises, on real files: it is written to a temporary file and renamed into place
/// only when complete, a damaged one never reads back as good, what a crash leaves mid-write is removed when the
/// store opens again, a restarted server serves its replicas again, and a full disk (a real, tiny tmpfs) is a clear
/// error with nothing acknowledged.
/// </summary>
public sealed class DurableReplicaTests : IDisposable
{
    private static readonly Torus Cube = new(3, 3, 3);

    private readonly string _root = Directory.CreateTempSubdirectory("camdoop-durable-").FullName;

    public void Dispose()
    {
        if (Directory.Exists(_root))
        {
            Directory.Delete(_root, recursive: true);
        }
    }

    private static byte[] Bytes(int n, int seed)
    {
        var bytes = new byte[n];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private static ChunkMeta Meta(string dataset, int index, byte[] bytes) =>
        StoreCube.MetaFor(ChunkPlacement.ChunkId(Cube, dataset, index, nonce: 1), bytes, dataset);

    private LocalChunkStore OpenStore()
    {
        var store = new LocalChunkStore(_root);
        store.Open();
        return store;
    }

    [Fact]
    public void AReplicaIsWrittenToATemporaryFileAndRenamedIntoPlaceWhenCommitted()
    {
        var store = OpenStore();
        var bytes = Bytes(300_000, 1);
        var meta = Meta("ds", 0, bytes);
        var sink = store.BeginWrite(meta);
        sink.Write(0, bytes);
        Assert.EndsWith(".part", sink.Path, StringComparison.Ordinal);
        Assert.True(File.Exists(sink.Path));
        Assert.False(File.Exists(store.DataPath(meta.Id)), "the replica is visible before it is committed");
        Assert.False(store.TryGet(meta.Id, out _));

        var stored = store.Commit(sink);
        Assert.Equal(bytes, File.ReadAllBytes(stored.DataPath));
        Assert.True(File.Exists(Path.ChangeExtension(stored.DataPath, ".meta")));
        Assert.Empty(Directory.GetFiles(store.Directory, "*.part*"));
        Assert.Equal(ReplicaHealth.Good, store.Verify(meta.Id));
    }

    [Fact]
    public void AReplicaDamagedOnDiskNeverReadsBackAsGood()
    {
        var store = OpenStore();
        var bytes = Bytes(100_000, 2);
        var meta = Meta("ds", 0, bytes);
        Assert.True(store.TryWriteLocal(meta, new MemoryChunkSource(bytes), out string? error), error);
        string path = store.DataPath(meta.Id);

        using (var file = new FileStream(path, FileMode.Open, FileAccess.Write))
        {
            file.Position = 77_777;
            file.WriteByte((byte)(bytes[77_777] ^ 0x01));
        }
        Assert.Equal(ReplicaHealth.Corrupt, store.Verify(meta.Id));

        File.WriteAllBytes(path, bytes.AsSpan(0, 50_000).ToArray()); // a torn write: the right bytes, too few
        Assert.Equal(ReplicaHealth.Corrupt, OpenStore().Verify(meta.Id));

        var wrong = meta with { Checksum = meta.Checksum ^ 1 };
        Assert.False(store.TryWriteLocal(wrong with { Id = ChunkPlacement.ChunkId(Cube, "ds", 1, nonce: 1) }, new MemoryChunkSource(bytes), out error));
        Assert.Contains("do not match the chunk's checksum", error, StringComparison.Ordinal);
        Assert.Empty(Directory.GetFiles(store.Directory, "*.part*"));
    }

    [Fact]
    public void WhatACrashLeavesMidWriteIsRemovedAndCommittedReplicasLoadAgain()
    {
        var first = OpenStore();
        var kept = Bytes(200_000, 3);
        var keptMeta = Meta("ds", 0, kept);
        Assert.True(first.TryWriteLocal(keptMeta, new MemoryChunkSource(kept), out string? error), error);

        // A write cut off halfway (the process died: its handle closed, nothing committed) ...
        var torn = Bytes(200_000, 4);
        var tornMeta = Meta("ds", 1, torn);
        var sink = first.BeginWrite(tornMeta);
        sink.Write(0, torn.AsSpan(0, 90_000));
        sink.Dispose();
        File.WriteAllBytes(sink.Path + ".meta", tornMeta.ToBytes());
        // ... and a commit cut between its two renames: the data in place, its metadata still temporary.
        var half = Bytes(10_000, 5);
        var halfMeta = Meta("ds", 2, half);
        File.WriteAllBytes(first.DataPath(halfMeta.Id), half);

        var second = OpenStore();
        Assert.Equal(1, second.Count);
        Assert.Equal(kept.Length, second.BytesStored);
        Assert.Equal(ReplicaHealth.Good, second.Verify(keptMeta.Id));
        Assert.Equal(ReplicaHealth.Missing, second.Verify(tornMeta.Id));
        Assert.Equal(ReplicaHealth.Missing, second.Verify(halfMeta.Id));
        Assert.Equal(
            [Path.GetFileName(first.DataPath(keptMeta.Id)), Path.GetFileName(Path.ChangeExtension(first.DataPath(keptMeta.Id), ".meta"))],
            Directory.GetFiles(second.Directory).Select(Path.GetFileName).Where(n => n != "boot").Order(StringComparer.Ordinal));
    }

    [Fact]
    public void AServerRestartedOnItsDataDirectoryServesItsReplicasAgain()
    {
        using var cube = new StoreCube(Cube);
        var bytes = Bytes(150_000, 6);
        var meta = Meta("restart", 3, bytes);
        var targets = ChunkPlacement.Targets(KeyMapper.Shared(Cube), meta.Id, ServerSet.AllOf(Cube));
        var write = cube.Write(targets[1], meta, bytes);
        Assert.True(write.Ok, write.Error);
        var primary = targets[0];

        cube.Sim.FailServer(primary, cube.Sim.Now);
        cube.Settle(1_000 * StoreCube.Ms);
        cube.Sim.RestoreServer(primary, cube.Sim.Now);
        cube.Settle(3_000 * StoreCube.Ms);

        var store = cube.Store(primary);
        Assert.True(store.Local.TryGet(meta.Id, out _), "the restarted server lost its replica");
        var read = cube.Read(primary, meta.Id);
        Assert.True(read.Ok, read.Error);
        Assert.Equal(primary, read.From); // its own replica, from its disk
        Assert.Equal(bytes, read.Bytes);
        Assert.Equal(0, read.Repairs);
        // And it serves the others: a reader elsewhere asks it first, as the primary.
        var remote = cube.Read(new Coordinate(2, 2, 2) == primary ? new Coordinate(1, 1, 1) : new Coordinate(2, 2, 2), meta.Id);
        Assert.True(remote.Ok, remote.Error);
        Assert.Equal(bytes, remote.Bytes);
    }

    /// <summary>Every server of the simulated cube keeps its data on one 2 MB tmpfs: a 1.5 MB chunk's three replicas cannot fit.</summary>
    [RootFact]
    public void AFullDiskIsAClearErrorAndNothingUnstoredIsAcknowledged()
    {
        string mount = Path.Combine(_root, "tiny");
        Directory.CreateDirectory(mount);
        Run("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mount);
        try
        {
            // The store alone: a replica larger than the disk is refused before a byte is written.
            var local = new LocalChunkStore(Path.Combine(mount, "alone"));
            local.Open();
            var big = Bytes(3 << 20, 7);
            var error = Assert.Throws<IOException>(() => local.BeginWrite(Meta("big", 0, big)));
            Assert.True(StorageErrors.IsDiskFull(error), error.Message);
            Assert.Empty(Directory.GetFiles(local.Directory, "*.part*"));
            Directory.Delete(Path.Combine(mount, "alone"), recursive: true);

            using var cube = new StoreCube(Cube, dataRoot: mount);
            var bytes = Bytes(1_500_000, 8);
            var meta = Meta("full", 0, bytes);
            var targets = ChunkPlacement.Targets(KeyMapper.Shared(Cube), meta.Id, ServerSet.AllOf(Cube));
            var writer = Cube.All().First(c => !targets.Contains(c));
            var write = cube.Write(writer, meta, bytes);
            Assert.False(write.Ok, "a write the disk could not hold was acknowledged");
            Assert.Contains("its disk is full", write.Error, StringComparison.Ordinal);
            Assert.DoesNotContain('\n', write.Error!);
            Assert.True(Cube.All().Sum(c => cube.Store(c).Counters.DiskFull) > 0);
            Assert.Empty(Directory.GetFiles(mount, "*.part*", SearchOption.AllDirectories));

            // The store stays usable: what fits is stored and reads back.
            var small = Bytes(20_000, 9);
            var smallMeta = Meta("full", 1, small);
            var ok = cube.Write(writer, smallMeta, small);
            Assert.True(ok.Ok, ok.Error);
            Assert.Equal(small, cube.Read(writer, smallMeta.Id).Bytes);
        }
        finally
        {
            Run("umount", "-l", mount);
        }
    }

    private static void Run(string command, params string[] args)
    {
        using var process = Process.Start(new ProcessStartInfo(command, args) { RedirectStandardError = true })!;
        string stderr = process.StandardError.ReadToEnd();
        process.WaitForExit();
        Assert.True(process.ExitCode == 0, $"{command} {string.Join(' ', args)}: {stderr}");
    }
}

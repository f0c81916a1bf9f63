using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Records;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>A simulated cube whose servers run key routing and the chunk store, with helpers to write and read.</summary>
internal sealed class StoreCube : IDisposable
{
    public const long Ms = SimTime.Millisecond;

    /// <summary>Re-replication on, with a short grace (3 s) and start delay (1 s), and no periodic scan to wait for.</summary>
    public static readonly ChunkStoreOptions KeepingReplicas = new()
    {
        KeepReplicas = true,
        ReReplicateAfter = 3_000 * Ms,
        ReplicationStartDelay = 1_000 * Ms,
        ReplicationScanInterval = 600_000 * Ms,
    };

    public StoreCube(Torus torus, double lossRate = 0, ulong seed = 1, string? dataRoot = null, ChunkStoreOptions? options = null)
    {
        Torus = torus;
        Sim = new Simulation(new SimulationOptions { Torus = torus, Seed = seed, LossRate = lossRate, DataRoot = dataRoot, Node = SimulationOptions.DefaultNodeOptions with { BeaconInterval = 50 * Ms } }, host =>
        {
            KeyRoutingService.Install(host);
            ChunkStoreService.Install(host, options);
        });
        Sim.Start();
    }

    public Torus Torus { get; }

    public Simulation Sim { get; }

    public ChunkStoreService Store(Coordinate c) => Sim.Host(c).GetService<ChunkStoreService>()!;

    public static ChunkMeta MetaFor(Key id, byte[] bytes, string dataset = "ds", int index = 0, int count = 1) => new()
    {
        Id = id,
        Length = bytes.Length,
        Checksum = XxHash64.Hash(bytes),
        Dataset = dataset,
        Index = index,
        Count = count,
        DatasetBytes = bytes.Length,
    };

    /// <summary>Writes from <paramref name="writer"/> and runs the simulation until the write completes.</summary>
    public WriteResult Write(Coordinate writer, ChunkMeta meta, byte[] bytes, long limit = 60_000 * Ms)
    {
        WriteResult? result = null;
        Store(writer).Write(meta, bytes, r => result = r);
        Assert.True(Sim.RunUntil(() => result is not null, Sim.Now + limit), "the write did not finish");
        return result!;
    }

    public ReadResult Read(Coordinate reader, Key id, long limit = 60_000 * Ms)
    {
        ReadResult? result = null;
        Store(reader).Read(id, r => result = r);
        Assert.True(Sim.RunUntil(() => result is not null, Sim.Now + limit), "the read did not finish");
        return result!;
    }

    public ListResult List(Coordinate lister, long limit = 60_000 * Ms)
    {
        ListResult? result = null;
        Store(lister).ListManifests(r => result = r);
        Assert.True(Sim.RunUntil(() => result is not null, Sim.Now + limit), "the listing did not finish");
        return result!;
    }

    public FsckResult Fsck(Coordinate checker, string? dataset = null, long limit = 60_000 * Ms)
    {
        FsckResult? result = null;
        Store(checker).Fsck(dataset, r => result = r);
        Assert.True(Sim.RunUntil(() => result is not null, Sim.Now + limit), "fsck did not finish");
        return result!;
    }

    public DeleteResult Delete(Coordinate deleter, string dataset, long limit = 60_000 * Ms)
    {
        DeleteResult? result = null;
        Store(deleter).DeleteDataset(dataset, r => result = r);
        Assert.True(Sim.RunUntil(() => result is not null, Sim.Now + limit), "the delete did not finish");
        return result!;
    }

    /// <summary>Stores dataset <paramref name="name"/> of <paramref name="chunks"/> random chunks and its manifest; returns the chunks.</summary>
    public List<ManifestChunk> Put(string name, int chunks, int chunkBytes = 1000, ulong nonce = 1)
    {
        var entries = new List<ManifestChunk>();
        for (int i = 0; i < chunks; i++)
        {
            var bytes = new byte[chunkBytes + i];
            new Random(i).NextBytes(bytes);
            var meta = MetaFor(ChunkPlacement.ChunkId(Torus, name, i, nonce), bytes, name, i, chunks);
            var write = Write(new Coordinate(0, 0, 0), meta, bytes);
            Assert.True(write.Ok, write.Error);
            entries.Add(new ManifestChunk(meta.Id, meta.Length, meta.Checksum));
        }
        var (m, b) = new DatasetManifest { Name = name, TotalBytes = entries.Sum(e => e.Length), Chunks = entries }.ToChunk();
        Assert.True(Write(new Coordinate(0, 0, 0), m, b).Ok);
        return entries;
    }

    /// <summary>The servers holding a replica of <paramref name="chunk"/> in their index.</summary>
    public List<Coordinate> Holders(Key chunk) => [.. Torus.All().Where(c => Store(c).Local.TryGet(chunk, out _))];

    /// <summary>Lets in-flight work (repairs, lingering transfers) settle.</summary>
    public void Settle(long duration = 2_000 * Ms) => Sim.RunUntil(Sim.Now + duration);

    public void Dispose() => Sim.Dispose();
}

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

    /// <summary>Lets in-flight work (repairs, lingering transfers) settle.</summary>
    public void Settle(long duration = 2_000 * Ms) => Sim.RunUntil(Sim.Now + duration);

    public void Dispose() => Sim.Dispose();
}

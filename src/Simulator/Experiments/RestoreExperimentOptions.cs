using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Experiments;

/// <summary>What <see cref="RestoreExperiment"/> measures: the time to restore three replicas after one server dies.</summary>
public sealed record RestoreExperimentOptions
{
    public required Torus Torus { get; init; }

    /// <summary>The server that dies.</summary>
    public required Coordinate Lost { get; init; }

    /// <summary>Bytes of chunks whose replica set includes <see cref="Lost"/>: all that is written (rounded up to whole chunks).</summary>
    public required long HeldBytes { get; init; }

    /// <summary>Bytes per chunk (the largest chunk `camdoop put` makes by default: 64 MiB).</summary>
    public long ChunkBytes { get; init; } = 64L << 20;

    /// <summary>Re-replication rate cap of every server, bytes a second (0: no cap); the chunk store's default.</summary>
    public long RateBytesPerSecond { get; init; } = 50L << 20;

    /// <summary>Replica copies a server sends at once; the chunk store's default.</summary>
    public int Concurrency { get; init; } = 2;

    /// <summary>How long the lost server must be unreachable before its replicas are made again (the store's default is 600 s).</summary>
    public long Grace { get; init; } = 10_000 * SimTime.Millisecond;

    public long LinkRateBitsPerSecond { get; init; } = 1_000_000_000;

    public ulong Seed { get; init; } = 1;

    /// <summary>Parent of the simulation's run directory, where the chunk stores write their files (deleted after).</summary>
    public string? DataRoot { get; init; }

    /// <summary>Simulated time after the failure by which every chunk must have three replicas again.</summary>
    public long TimeLimit { get; init; } = 3_600_000 * SimTime.Millisecond;

    /// <summary>How often (simulated time) the restore is checked and the copies sampled.</summary>
    public long SampleInterval { get; init; } = 10 * SimTime.Millisecond;

    public void Validate()
    {
        ArgumentNullException.ThrowIfNull(Torus);
        if (!Torus.Contains(Lost))
        {
            throw new ArgumentException($"server {Lost} is not a server of the {Torus} torus");
        }
        if (Torus.Count < 4)
        {
            throw new ArgumentException("a torus of at least 4 servers is needed to keep three replicas without one");
        }
        if (ChunkBytes is < 1 or > ChunkStore.ChunkMeta.MaxChunkBytes)
        {
            throw new ArgumentException($"the chunk size must be between 1 byte and {ChunkStore.ChunkMeta.MaxChunkBytes} bytes");
        }
        if (HeldBytes < 1)
        {
            throw new ArgumentException("the bytes held by the lost server must be positive");
        }
        if (HeldBytes / ChunkBytes > 100_000)
        {
            throw new ArgumentException("more than 100,000 chunks: use larger chunks");
        }
        if (RateBytesPerSecond < 0)
        {
            throw new ArgumentException("the rate cap must be 0 (no cap) or positive");
        }
        if (Concurrency < 1)
        {
            throw new ArgumentException("the concurrency must be at least 1");
        }
        if (Grace < SimTime.Millisecond)
        {
            throw new ArgumentException("the grace period must be at least 1 ms");
        }
        if (LinkRateBitsPerSecond <= 0 || TimeLimit <= 0 || SampleInterval <= 0)
        {
            throw new ArgumentException("the link rate, time limit and sample interval must be positive");
        }
    }
}

using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Records;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// Time to restore three replicas after a server dies, on a simulated cube whose servers run the real chunk store
/// (re-replication on, writing real files under the run directory). Only chunks whose replica set includes the server
/// about to die are written, <see cref="RestoreExperimentOptions.HeldBytes"/> of them; once every server has checked
/// where its replicas belong, the server fails, and the run goes on until every chunk has three live replicas with the
/// right checksum. The time is split into detection (until every surviving holder's routing finds the server
/// unreachable), grace (until every surviving holder takes it for lost) and copying, and the copying is set against
/// the bounds of the rate cap and of the links.
/// </summary>
public static class RestoreExperiment
{
    private const long Ms = SimTime.Millisecond;

    public static RestoreExperimentResult Run(RestoreExperimentOptions options, IProgress<string>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var torus = options.Torus;
        var store = new ChunkStoreOptions
        {
            KeepReplicas = true,
            ReReplicateAfter = options.Grace,
            ReReplicateBytesPerSecond = options.RateBytesPerSecond,
            ReReplicateConcurrency = options.Concurrency,
        };
        var simOptions = new SimulationOptions
        {
            Torus = torus,
            Seed = options.Seed,
            LinkRateBitsPerSecond = options.LinkRateBitsPerSecond,
            DataRoot = options.DataRoot,
        };
        using var sim = new Simulation(simOptions, host => ServerStack.OnTorus(host, new ServerStackOptions { ChunkStore = store }));
        sim.Start();
        ChunkStoreService Store(Coordinate c) => sim.Host(c).GetService<ChunkStoreService>()!;

        // The chunks: ids of a dataset whose replica set (as placed with every server up) includes the lost server.
        var mapper = KeyMapper.Shared(torus);
        var all = ServerSet.AllOf(torus);
        var without = all.Clone();
        without.Remove(torus.IndexOf(options.Lost));
        int count = (int)((options.HeldBytes + options.ChunkBytes - 1) / options.ChunkBytes);
        var chunks = new List<RestoredChunk>(count);
        ulong nonce = options.Seed;
        for (int index = 0; chunks.Count < count; index++)
        {
            var id = ChunkPlacement.ChunkId(torus, "restore", index, nonce);
            var placed = ChunkPlacement.Targets(mapper, id, all);
            if (!placed.Contains(options.Lost))
            {
                continue;
            }
            var after = ChunkPlacement.Targets(mapper, id, without);
            chunks.Add(new RestoredChunk(id, chunks.Count, placed, after));
        }

        // Written one at a time from each chunk's primary, which keeps one replica and sends the two others.
        long written = 0;
        var metas = new Dictionary<Key, ChunkMeta>();
        foreach (var chunk in chunks)
        {
            long length = Math.Min(options.ChunkBytes, options.HeldBytes - written);
            var bytes = new byte[length];
            new Random(HashCode.Combine(options.Seed, chunk.Index)).NextBytes(bytes);
            var meta = new ChunkMeta
            {
                Id = chunk.Id,
                Length = length,
                Checksum = XxHash64.Hash(bytes),
                Dataset = "restore",
                Index = chunk.Index,
                Count = chunks.Count,
                DatasetBytes = options.HeldBytes,
            };
            metas[chunk.Id] = meta;
            WriteResult? result = null;
            Store(chunk.Before[0]).Write(meta, bytes, r => result = r);
            if (!sim.RunUntil(() => result is not null, sim.Now + (600_000 * Ms)) || !result!.Ok)
            {
                throw new InvalidOperationException($"writing chunk {chunk.Index} failed: {result?.Error ?? "no answer"}");
            }
            written += length;
            progress?.Report($"wrote chunk {chunk.Index + 1}/{chunks.Count}");
        }
        foreach (var chunk in chunks)
        {
            var holders = torus.All().Where(s => Store(s).Local.TryGet(chunk.Id, out _)).ToHashSet();
            if (!holders.SetEquals(chunk.Before))
            {
                throw new InvalidOperationException($"chunk {chunk.Index} is held by {string.Join(' ', holders)}, not by its replica set {string.Join(' ', chunk.Before)}");
            }
        }

        // Every server checks where its replicas belong (its first scan, past the start delay) and confirms them
        // with the other positions: the lost server's chunks are then as in a cube that has run for a while.
        long firstScan = Math.Min(store.ReplicationStartDelay, store.ReReplicateAfter) + (2_000 * Ms);
        if (sim.Now < firstScan)
        {
            sim.RunUntil(firstScan);
        }
        sim.RunUntil(() => torus.All().All(s => Store(s).ReplicaCopiesPending == 0), sim.Now + (600_000 * Ms));
        sim.RunFor(100 * Ms);

        var survivors = chunks.SelectMany(c => c.Before).Where(s => s != options.Lost).Distinct().ToList();
        var receivers = chunks.Select(c => c.After.Single(s => !c.Before.Contains(s))).Distinct().ToList();
        var before = torus.All().ToDictionary(s => s, s => Snapshot(Store(s).Counters));
        long[]? linksAtLost = null;

        long failedAt = sim.Now;
        sim.FailServer(options.Lost, failedAt);
        long detectedAt = -1, lostAt = -1, firstCopyAt = -1, restoredAt = -1;
        long waitingTime = 0; // sender-time with copies queued and none running
        long runningTime = 0; // sender-time with at least one copy running
        long deadline = failedAt + options.TimeLimit;
        while (sim.Now < deadline)
        {
            sim.RunFor(options.SampleInterval);
            long now = sim.Now;
            if (detectedAt < 0 && survivors.All(s => !Store(s).IsReachable(options.Lost)))
            {
                detectedAt = now;
            }
            if (lostAt < 0 && survivors.All(s => Store(s).LostServers.Contains(options.Lost)))
            {
                lostAt = now;
                linksAtLost = [.. sim.Links.Select(l => l.BusyTime)];
            }
            if (lostAt >= 0)
            {
                foreach (var s in survivors)
                {
                    var st = Store(s);
                    if (st.ReplicaCopiesPending > 0)
                    {
                        if (st.ActiveOutbound > 0)
                        {
                            runningTime += options.SampleInterval;
                        }
                        else
                        {
                            waitingTime += options.SampleInterval;
                        }
                    }
                }
            }
            if (firstCopyAt < 0 && survivors.Any(s => Store(s).ActiveOutbound > 0) && detectedAt >= 0)
            {
                firstCopyAt = now;
            }
            if (chunks.All(c => LiveHolders(c.Id) == ChunkPlacement.Replicas))
            {
                restoredAt = now;
                break;
            }
        }

        int LiveHolders(Key id) => torus.All().Count(s => !sim.IsServerFailed(s) && Store(s).Local.TryGet(id, out var held) && !held.Corrupt);

        // Every chunk: three live replicas, exactly where it is placed now, each with the right checksum.
        int good = 0;
        foreach (var chunk in chunks)
        {
            var holders = torus.All().Where(s => !sim.IsServerFailed(s) && Store(s).Local.TryGet(chunk.Id, out _)).ToList();
            if (holders.Count == ChunkPlacement.Replicas && holders.ToHashSet().SetEquals(chunk.After)
                && holders.All(s => Store(s).Local.Verify(chunk.Id) == ReplicaHealth.Good))
            {
                good++;
            }
        }

        var senders = new List<ServerCopies>();
        long confirmed = 0, failed = 0;
        foreach (var s in torus.All().Where(s => s != options.Lost))
        {
            var delta = Snapshot(Store(s).Counters) - before[s];
            confirmed += delta.Confirmed;
            failed += delta.Failed;
            if (delta.Copied > 0)
            {
                senders.Add(new ServerCopies(s, delta.Copied, delta.Bytes));
            }
        }
        long copyEnd = restoredAt >= 0 ? restoredAt : sim.Now;
        double busiest = 0;
        int linksUsed = 0;
        if (linksAtLost is not null && copyEnd > lostAt)
        {
            for (int i = 0; i < sim.Links.Count; i++)
            {
                double u = (sim.Links[i].BusyTime - linksAtLost[i]) / (double)(copyEnd - lostAt);
                busiest = Math.Max(busiest, u);
                // Beacons alone keep a link busy well under 1%.
                if (u > 0.01)
                {
                    linksUsed++;
                }
            }
        }
        return new RestoreExperimentResult
        {
            Options = options,
            Chunks = chunks.Count,
            Bytes = written,
            LostWasPrimary = chunks.Count(c => c.Before[0] == options.Lost),
            Holders = survivors.Count,
            Receivers = receivers.Count,
            FailedAt = failedAt,
            DetectedAt = detectedAt,
            LostAt = lostAt,
            FirstCopyAt = firstCopyAt,
            RestoredAt = restoredAt,
            GoodChunks = good,
            Senders = senders,
            CopiesConfirmed = confirmed,
            CopiesFailed = failed,
            SenderWaitingSeconds = waitingTime / 1e9,
            SenderCopyingSeconds = runningTime / 1e9,
            BusiestLinkUtilisation = busiest,
            LinksUsed = linksUsed,
        };
    }

    private static Counts Snapshot(ChunkStoreCounters c) => new(c.ReplicasCopied, c.ReplicaBytesCopied, c.ReplicasConfirmed, c.ReplicaCopiesFailed);

    private readonly record struct Counts(long Copied, long Bytes, long Confirmed, long Failed)
    {
        public static Counts operator -(Counts a, Counts b) => new(a.Copied - b.Copied, a.Bytes - b.Bytes, a.Confirmed - b.Confirmed, a.Failed - b.Failed);
    }

    private sealed record RestoredChunk(Key Id, int Index, IReadOnlyList<Coordinate> Before, IReadOnlyList<Coordinate> After);
}

/// <summary>Copies one server sent to restore the lost server's replicas.</summary>
public sealed record ServerCopies(Coordinate Server, long Copies, long Bytes);

/// <summary>What <see cref="RestoreExperiment"/> measured. Times in simulated nanoseconds since the cube started.</summary>
public sealed record RestoreExperimentResult
{
    public required RestoreExperimentOptions Options { get; init; }

    public int Chunks { get; init; }

    /// <summary>Bytes of the chunks written, all held (among others) by the lost server.</summary>
    public long Bytes { get; init; }

    /// <summary>Chunks whose primary was the lost server.</summary>
    public int LostWasPrimary { get; init; }

    /// <summary>Distinct surviving holders of the lost server's chunks: the servers that may send a copy.</summary>
    public int Holders { get; init; }

    /// <summary>Distinct servers that own a replica position of a chunk once the lost server is left out: they receive the copies.</summary>
    public int Receivers { get; init; }

    public long FailedAt { get; init; }

    /// <summary>When every surviving holder's routing found the lost server unreachable; -1: never.</summary>
    public long DetectedAt { get; init; }

    /// <summary>When every surviving holder took it for lost (the grace period over, at its next once-a-second check); -1: never.</summary>
    public long LostAt { get; init; }

    public long FirstCopyAt { get; init; }

    /// <summary>When every chunk had three live replicas again; -1: not within the time limit.</summary>
    public long RestoredAt { get; init; }

    /// <summary>Chunks with three live replicas where they are placed now, each with the right checksum.</summary>
    public int GoodChunks { get; init; }

    public required IReadOnlyList<ServerCopies> Senders { get; init; }

    /// <summary>Offers answered "already stored" (a copy found unneeded) during the restore.</summary>
    public long CopiesConfirmed { get; init; }

    /// <summary>Offers that failed (the target was receiving the chunk from the other holder: Busy).</summary>
    public long CopiesFailed { get; init; }

    /// <summary>Summed over the holders: time with copies queued and none sent (waiting for the next once-a-second check or the rate cap).</summary>
    public double SenderWaitingSeconds { get; init; }

    /// <summary>Summed over the holders: time with a copy being sent.</summary>
    public double SenderCopyingSeconds { get; init; }

    /// <summary>The busiest directed link's utilisation during the copy phase.</summary>
    public double BusiestLinkUtilisation { get; init; }

    /// <summary>Directed links more than 1% busy during the copy phase.</summary>
    public int LinksUsed { get; init; }

    public bool Restored => RestoredAt >= 0 && GoodChunks == Chunks;

    public double DetectionSeconds => DetectedAt < 0 ? double.NaN : (DetectedAt - FailedAt) / 1e9;

    public double GraceSeconds => LostAt < 0 || DetectedAt < 0 ? double.NaN : (LostAt - DetectedAt) / 1e9;

    public double CopySeconds => RestoredAt < 0 || LostAt < 0 ? double.NaN : (RestoredAt - LostAt) / 1e9;

    public double TotalSeconds => RestoredAt < 0 ? double.NaN : (RestoredAt - FailedAt) / 1e9;

    private double LinkBytesPerSecond => Options.LinkRateBitsPerSecond / 8.0;

    /// <summary>
    /// The links' bound on the copying: every byte leaves one of the holders and enters one of the receivers, each
    /// with six links, and a chunk is one transfer along one route, so it takes at least a chunk's time on one link.
    /// </summary>
    public double LinkBoundSeconds => Math.Max(
        Math.Max(Bytes / (Holders * 6 * LinkBytesPerSecond), Bytes / (Receivers * 6 * LinkBytesPerSecond)),
        Math.Min(Options.ChunkBytes, Bytes) / LinkBytesPerSecond);

    /// <summary>The rate cap's bound: the bytes spread evenly over the holders, each sending at the cap on average (0: no cap).</summary>
    public double CapBoundSeconds => Options.RateBytesPerSecond <= 0 ? 0 : Bytes / (double)(Holders * Options.RateBytesPerSecond);

    /// <summary>The cap's bound with the copies as they were sent: the busiest sender at the cap.</summary>
    public double CapBoundAsSentSeconds => Options.RateBytesPerSecond <= 0 || Senders.Count == 0 ? 0 : Senders.Max(s => s.Bytes) / (double)Options.RateBytesPerSecond;

    public double BoundSeconds => Math.Max(LinkBoundSeconds, CapBoundSeconds);
}

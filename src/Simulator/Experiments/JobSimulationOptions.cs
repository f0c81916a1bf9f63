using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>One simulated MapReduce job on a CamCube: cube, workload, job, R, mode, and simulator settings.</summary>
public sealed record JobSimulationOptions
{
    public required Torus Torus { get; init; }

    /// <summary>What this run shares with the other runs of a sweep: input size, seed, servers, trees, compute and energy models.</summary>
    public SimulationSettings Settings { get; init; } = new();

    public Workload Workload { get; init; } = Workload.Synthetic;

    /// <summary>Output ratio S of the synthetic workload (0 means 1/N, the Camdoop paper, §5.2).</summary>
    public double OutputRatio { get; init; } = 1;

    public int ReduceTasks { get; init; } = 1;

    public ShuffleMode Mode { get; init; } = ShuffleMode.Camdoop;

    /// <summary>
    /// The job: a built-in name with options ("topk?k=20") or a user job ("path/Jobs.dll#Ns.Type"). Null picks the
    /// workload's built-in job. Required for <see cref="Workload.Files"/>.
    /// </summary>
    public string? Job { get; init; }

    /// <summary>
    /// For <see cref="Workload.Files"/>: a directory of per-server inputs named server-NNNNN.input (missing ones are
    /// empty), or one file split evenly over the servers at record boundaries (lines, or the job's fixed records).
    /// </summary>
    public string? InputPath { get; init; }

    /// <summary>Copy each reduce task's output here as part-NNNNN (text jobs: key TAB value lines in key order; sort: raw records).</summary>
    public string? OutputDirectory { get; init; }

    /// <summary>Write part files on the roots even without an output directory (tests read them).</summary>
    public bool WriteOutputFiles { get; init; }

    /// <summary>Root reducers replicate their output as they write it, so a failed root's task resumes from the replica.</summary>
    public bool ReplicateOutput { get; init; }

    /// <summary>Keep map outputs as indexed run files in each server's data directory instead of in memory.</summary>
    public bool MapOutputOnDisk { get; init; }

    /// <summary>Monitoring queries asked while the job runs, every one from <see cref="QueryFrom"/> (see <see cref="SimulatedQueries"/>).</summary>
    public IReadOnlyList<string> Queries { get; init; } = [];

    /// <summary>How long to keep asking <see cref="Queries"/> after the job ends; 0: one and a half of the longest interval (one more round).</summary>
    public long QueryTailNs { get; init; }

    /// <summary>The server that asks <see cref="Queries"/>.</summary>
    public Coordinate QueryFrom { get; init; }

    /// <summary>
    /// Rate limits set on every server they cover when the job starts (services by id, jobs by id), as `camdoop limit`
    /// sets them on a cube.
    /// </summary>
    public IReadOnlyList<Camdoop.Monitoring.Control.RateLimit> Limits { get; init; } = [];

    /// <summary>Random frame loss on every link (the transport must still deliver every byte).</summary>
    public double LossRate { get; init; }

    public long LinkRateBitsPerSecond { get; init; } = 1_000_000_000;

    /// <summary>
    /// A switched network in place of the torus's cables (<see cref="Torus"/> still names the servers and their data);
    /// null: the torus. The Camdoop modes need the torus, <see cref="ShuffleMode.Tcp"/> a switched network.
    /// </summary>
    public SwitchedNetworkOptions? Network { get; init; }

    /// <summary>How every server's TCP behaves (<see cref="ShuffleMode.Tcp"/>).</summary>
    public TcpOptions Tcp { get; init; } = new();

    /// <summary>Bytes of a TCP stream a server keeps until acknowledged: the socket's send buffer (<see cref="ShuffleMode.Tcp"/>).</summary>
    public int TcpSendBufferBytes { get; init; } = 128 * 1024;

    /// <summary>The direct shuffle's settings (<see cref="ShuffleMode.Tcp"/>); null keeps the defaults.</summary>
    public DirectShuffleOptions? Direct { get; init; }

    /// <summary>Mode tcp: how the servers aggregate among themselves on the way to the reducer (default: not at all).</summary>
    public Aggregation Aggregation { get; init; } = Aggregation.Direct;

    /// <summary>Mode tcp: aggregation trees per reduce task, each carrying the records of some key stripes.</summary>
    public int AggregationTrees { get; init; } = 1;

    /// <summary>
    /// Mode tcp: whether the job's streams take the network's aggregation (NetAgg's boxes, or <see cref="Aggregation"/>);
    /// false sends every map output straight to its reducer, as traffic the network does not aggregate (the NetAgg
    /// paper's background flows, beside aggregatable jobs run at once).
    /// </summary>
    public bool Aggregated { get; init; } = true;

    /// <summary>Threads for generating and mapping the inputs (independent per server); 0 = all cores.</summary>
    public int MapParallelism { get; init; }

    /// <summary>
    /// Threads for the shuffle's simulation (<see cref="SimulationOptions.Threads"/>); 0 = chosen by the cube's size
    /// (<see cref="DefaultSimulationThreads"/>). The results do not depend on it.
    /// </summary>
    public int SimulationThreads { get; init; } = 1;

    /// <summary>Cubes of at least this many servers are simulated on every core by default.</summary>
    public const int ParallelSimulationServers = 512;

    /// <summary>
    /// The threads a simulation of <paramref name="servers"/> servers takes when none are asked for: one below
    /// <see cref="ParallelSimulationServers"/>, where a partition's step between two synchronisations is too short
    /// for a second thread to repay its waiting (it costs CPU and saves little time), else every core.
    /// </summary>
    public static int DefaultSimulationThreads(int servers) =>
        servers >= ParallelSimulationServers ? Environment.ProcessorCount : 1;

    /// <summary>Give up when the shuffle has not finished after this much simulated time (ns).</summary>
    public long TimeLimit { get; init; } = 3_600L * 1_000_000_000;

    public ulong JobId { get; init; } = 0xCA3D_0000_0000_0001UL;

    /// <summary>
    /// The servers (indices in torus order) that hold the job's input and run its map tasks, the i-th holding what
    /// server i of a cube of that many would: a job confined to some servers (vertical partitioning, the Camdoop paper,
    /// §5.3). Every other server still hosts the job's vertices and forwards for it. Null: every server.
    /// </summary>
    public IReadOnlyList<int>? MapServers { get; init; }

    /// <summary>Each reduce task's root server (indices in torus order, distinct); null spreads them from the job id.</summary>
    public IReadOnlyList<int>? Roots { get; init; }

    /// <summary>Called with the simulation before it starts (tests inject drops or faults here).</summary>
    public Action<Simulation>? Configure { get; init; }

    /// <summary>
    /// Called before the run with the virtual time the job's shuffle will start (a rehearsal of the run tells), to
    /// schedule actions relative to it (tests look mid-shuffle or inject faults here).
    /// </summary>
    public Action<Simulation, long>? AtShuffleStart { get; init; }

    /// <summary>
    /// Failures to inject, at simulated times after the shuffle starts (the Camdoop paper, §4.2, §5.4), before the job
    /// is submitted, or while the servers map. With any, servers detect failures with a real node's beacons (every
    /// 10 ms, down after 3 misses), so detection is part of the cost; on a switched network, after as long.
    /// </summary>
    public IReadOnlyList<InjectedFailure> Failures { get; init; } = [];

    /// <summary>Receives the servers' log entries (Info and above), e.g. to follow a recovery.</summary>
    public Action<LogEntry>? LogSink { get; init; }

    /// <summary>Beacons as a real node sends them (10 ms, 3 misses) even without failures: a baseline for runs with them.</summary>
    public bool NodeBeacons { get; init; }

    /// <summary>
    /// Folds every event into a hash (<see cref="JobSimulationResult.EventTraceHash"/>): two runs with the same hash
    /// simulated the same events at the same times. The simulation then uses one thread.
    /// </summary>
    public bool TraceEvents { get; init; }

    /// <summary>
    /// Called after the run, before the simulation is torn down, with every server's Camdoop service and its part of
    /// the (first) job (the servers have dropped it by then: the part is kept as it was).
    /// </summary>
    public Action<Simulation, IReadOnlyList<CamdoopService>, IReadOnlyList<ServerJob?>>? Inspect { get; init; }

    /// <summary>
    /// The Camdoop service's options on the simulated servers. Without injected failures no server can fail, so the
    /// bytes a stream keeps for a restart after its parent's failure would never be read: they are not kept (unless
    /// <see cref="SimulationSettings.Service"/> says how many to keep). Keeping them changes memory, never what is sent
    /// when; at 16x16x16, R = 1 they were about 10 GB.
    /// </summary>
    public CamdoopServiceOptions? ServiceOptionsForRun()
    {
        var service = Settings.Service;
        if (Failures.Count > 0 || service?.ResumeRetentionBytes >= 0)
        {
            return service;
        }
        return (service ?? new CamdoopServiceOptions()) with { ResumeRetentionBytes = 0 };
    }

    public void Validate()
    {
        ArgumentNullException.ThrowIfNull(Torus);
        if (ReduceTasks < 1 || ReduceTasks > Torus.Count)
        {
            throw new ArgumentException($"R must be between 1 and the {Torus.Count} servers of the {Torus} torus");
        }
        ArgumentNullException.ThrowIfNull(Settings);
        Settings.Validate();
        if (Workload == Workload.Synthetic && OutputRatio != 0 && (OutputRatio < 1.0 / Torus.Count || OutputRatio > 1))
        {
            throw new ArgumentException($"S must be 0 (meaning 1/N) or between 1/N = {1.0 / Torus.Count:0.####} and 1");
        }
        if (Workload == Workload.Files && (InputPath is null || Job is null))
        {
            throw new ArgumentException("a files workload needs an input path and a job");
        }
        if (InputPath is not null && !File.Exists(InputPath) && !Directory.Exists(InputPath))
        {
            throw new ArgumentException($"input '{InputPath}' does not exist");
        }
        if (LossRate is < 0 or >= 1 || double.IsNaN(LossRate))
        {
            throw new ArgumentException("the loss rate must be in [0, 1)");
        }
        if (SimulationThreads < 0)
        {
            throw new ArgumentException("simulation threads must be 0 (all cores) or more");
        }
        if (TimeLimit <= 0)
        {
            throw new ArgumentException("the time limit must be positive");
        }
        if (MapServers is not null && (MapServers.Count == 0 || MapServers.Any(m => (uint)m >= (uint)Torus.Count) || MapServers.Distinct().Count() != MapServers.Count))
        {
            throw new ArgumentException($"the map servers must be distinct servers of the {Torus.Count}, at least one");
        }
        if (Roots is not null && (Roots.Count != ReduceTasks || Roots.Any(r => (uint)r >= (uint)Torus.Count) || Roots.Distinct().Count() != Roots.Count))
        {
            throw new ArgumentException($"placed roots must be R = {ReduceTasks} distinct servers of the {Torus.Count}");
        }
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(AggregationTrees);
        if ((Aggregation != Aggregation.Direct || AggregationTrees != 1 || !Aggregated) && Mode != ShuffleMode.Tcp)
        {
            throw new ArgumentException($"aggregation {Aggregation.Name()} shapes the streams of mode tcp on a switched network, not mode {Mode.Name()}");
        }
        if (Mode != ShuffleMode.Tcp && Failures.Any(f => f.IsAggBox))
        {
            throw new ArgumentException("agg boxes fail only on a netagg network in mode tcp");
        }
        if (Mode == ShuffleMode.Tcp)
        {
            if (Network is null)
            {
                throw new ArgumentException("mode tcp shuffles through a switch: it needs a switched network (switch, racks, fattree or grin), not the torus");
            }
            if (ReplicateOutput || Queries.Count > 0)
            {
                throw new ArgumentException("mode tcp runs without output replicas or monitoring queries");
            }
            if (Failures.Any(f => f.IsLink || (f.IsAggBox && (f.AtNanoseconds < 0 || f.DuringMap || !Network.Topology.HasAggBoxes))))
            {
                throw new ArgumentException("mode tcp takes failures of servers, and of agg boxes during the shuffle (box@NAME, on a netagg network); a switched network has no torus cable to cut");
            }
            if (Network.Topology.HasAggBoxes && Aggregation != Aggregation.Direct)
            {
                throw new ArgumentException($"a netagg network aggregates at its agg boxes: aggregation {Aggregation.Name()} is for servers without them");
            }
            Tcp.Validate();
            Direct?.Validate();
            ArgumentOutOfRangeException.ThrowIfLessThan(TcpSendBufferBytes, Tcp.SegmentSize);
        }
        else if (Network is not null)
        {
            throw new ArgumentException($"mode {Mode.Name()} shuffles over the torus's trees: on a switched network use mode tcp");
        }
        if (Queries.Count > 0 && !Torus.Contains(QueryFrom))
        {
            throw new ArgumentException($"the asking server {QueryFrom.Name} is not in the {Torus} torus");
        }
        foreach (var query in Queries)
        {
            SimulatedQueries.Check(query);
        }
        foreach (var limit in Limits)
        {
            limit.Check();
            if (limit.Servers.Any(c => !Torus.Contains(c)))
            {
                throw new ArgumentException($"a rate limit names a server outside the {Torus} torus");
            }
        }
    }

    /// <summary>The servers that map the job's input, every one when <see cref="MapServers"/> is null.</summary>
    internal IReadOnlyList<int> MapServerList => MapServers ?? [.. Enumerable.Range(0, Torus.Count)];
}

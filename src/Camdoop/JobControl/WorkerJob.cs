using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>One job's attempt on this server, as its worker runs it.</summary>
internal sealed class WorkerJob(ulong jobId, int attempt, Coordinate coordinator, StartMessage start, IReadOnlyList<Key> chunks)
{
    /// <summary>The job's id (its control identity; the attempt's shuffle id is in <see cref="Description"/>).</summary>
    public ulong JobId { get; } = jobId;

    public int Attempt { get; } = attempt;

    /// <summary>Where this server reports: the job's coordinator as far as it knows.</summary>
    public Coordinate Coordinator { get; set; } = coordinator;

    public JobDescription Description { get; } = start.Description;

    public string? OutputDataset { get; } = start.OutputDataset;

    /// <summary>The chunk ids every host maps in this attempt, as the coordinator assigned them.</summary>
    public SortedDictionary<int, IReadOnlyList<Key>> Directory { get; } = start.Directory;

    /// <summary>The hosts still in the job as this server sees it: the directory's, less those it saw lost.</summary>
    public HashSet<Coordinate> Members { get; } = [];

    /// <summary>The chunk ids this server maps.</summary>
    public IReadOnlyList<Key> Chunks { get; } = chunks;

    public Dictionary<Key, string> ChunkPaths { get; } = [];

    public int PendingChunks { get; set; }

    public string? PrepareError { get; set; }

    public IReadOnlyList<MapOutput> MapOutputs { get; set; } = [];

    /// <summary>The job, loaded (through this server's catalog) when its map tasks ran.</summary>
    public IMapReduceJob? Job { get; set; }

    public bool Mapped { get; set; }

    /// <summary>The map phase's report, kept to send again to a new coordinator.</summary>
    public MapReport? MapReport { get; set; }

    /// <summary>Reduce tasks done here and their reports, kept to send again to a new coordinator.</summary>
    public Dictionary<int, byte[]> ReduceReports { get; } = [];

    /// <summary>Why the job failed here, kept to send again to a new coordinator.</summary>
    public string? Failure { get; set; }

    /// <summary>Reduce tasks done with an output that outlives their root, as the coordinator last told.</summary>
    public HashSet<int> DoneReduceTasks { get; } = [];

    public bool Shuffling { get; set; }

    public ServerJob? ServerJob { get; set; }

    /// <summary>This server's part of a TCP Camdoop job (mode tcp), in place of <see cref="ServerJob"/>.</summary>
    public DirectJob? DirectJob { get; set; }

    /// <summary>The aggregation trees of a TCP Camdoop job, as repaired after appliances failed.</summary>
    public IAggregationPlan? Plan { get; set; }

    public WorkerTotals LastReported { get; set; } = new(-1, 0, 0, 0);

    /// <summary>The service's resent-bytes counter when this job's shuffle started.</summary>
    public long ResentBefore { get; set; }

    public bool Ended { get; set; }

    /// <summary>The job was killed (or this attempt started over): its partial reduce outputs go with its map outputs.</summary>
    public bool DiscardOutput { get; set; }

    public bool IsFinished => ServerJob?.IsFinished ?? DirectJob?.IsFinished ?? false;

    public void DisposeMapOutputs()
    {
        foreach (var output in MapOutputs)
        {
            output.Dispose();
        }
    }
}

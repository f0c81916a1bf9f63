using System.Globalization;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Monitoring.Jobs;
using Camdoop.Runtime.Topology;

namespace Camdoop.Server;

/// <summary>
/// The jobs of a server's <see cref="CamdoopService"/>: their vertices' progress and bytes, and the limits and
/// frame bytes of its shuffle transport's per-port schedulers; and those of its <see cref="DirectShuffleService"/>
/// (TCP Camdoop), whose streams stand for vertices and which no rate limit reaches. Lives with the server's stack, which knows both
/// services, so that monitoring need not know the MapReduce engine. A job the service forgets (at its end, or killed)
/// stays in a history of the last <see cref="HistoryLength"/> ended here, as it was then, so that the jobs table (and
/// the web view's Jobs panel) still shows what ran.
/// </summary>
public sealed class CamdoopJobSource : IJobSource
{
    /// <summary>Ended jobs a server remembers; the oldest goes first.</summary>
    public const int HistoryLength = 50;

    private readonly CamdoopService _camdoop;
    private readonly DirectShuffleService? _direct;
    private readonly Dictionary<ulong, long> _started = [];
    private readonly Dictionary<ulong, long> _ended = [];
    private readonly Queue<JobStats> _history = new();

    public CamdoopJobSource(CamdoopService camdoop, DirectShuffleService? direct = null)
    {
        _camdoop = camdoop ?? throw new ArgumentNullException(nameof(camdoop));
        _camdoop.JobStarted += job => _started[job.JobId] = Now();
        _camdoop.JobRemoving += job => Remember(Stats(job, removed: true));
        _direct = direct;
        if (direct is not null)
        {
            direct.JobStarted += job => _started[job.JobId] = Now();
            direct.JobRemoving += job => Remember(Stats(job, removed: true));
        }
    }

    public IReadOnlyList<JobStats> Snapshot()
    {
        var jobs = new List<JobStats>(_camdoop.Jobs.Count + _history.Count);
        foreach (var job in _camdoop.Jobs)
        {
            jobs.Add(Stats(job, removed: false));
        }
        foreach (var job in _direct?.Jobs ?? [])
        {
            jobs.Add(Stats(job, removed: false));
        }
        jobs.AddRange(_history);
        return jobs;
    }

    public void SetLimit(ulong jobId, long bytesPerSecond, int portMask) => _camdoop.Transport.SetJobLimit(jobId, bytesPerSecond, portMask);

    /// <summary>Keeps a job a service is about to forget, with its state and counters as they are now.</summary>
    private void Remember(JobStats stats)
    {
        _started.Remove(stats.JobId);
        _ended.Remove(stats.JobId);
        _history.Enqueue(stats);
        while (_history.Count > HistoryLength)
        {
            _history.Dequeue();
        }
    }

    private JobStats Stats(ServerJob job, bool removed)
    {
        int vertices = 0;
        int done = 0;
        long bytesIn = 0;
        long bytesOut = 0;
        foreach (var v in job.Vertices)
        {
            vertices++;
            done += v.IsFinished ? 1 : 0;
            bytesOut += v.Output.Acknowledged;
            foreach (var child in v.Children)
            {
                bytesIn += child.Received;
            }
        }
        foreach (var root in job.RootReducers)
        {
            foreach (var child in root.Children)
            {
                bytesIn += child.Received;
            }
        }
        var state = StateOf(job.Failure, job.IsFinished || job.CompletedEverywhere, removed);
        long limit = 0;
        long frameBytes = 0;
        foreach (var port in Ports.All)
        {
            limit = Math.Max(limit, _camdoop.Transport.JobLimit(job.JobId, port));
            frameBytes += _camdoop.Transport.Scheduler(port).JobBytesSent(job.JobId);
        }
        return new JobStats(job.JobId, job.Job.Name, state, job.Description.ReduceTasks, vertices, done,
            job.CompletedReduceTasks.Count, bytesIn, bytesOut, job.AggregatedBytes, limit, frameBytes,
            Output(job.Description), job.CompletedReduceTasks.Sum(r => r.FileBytes), _started.GetValueOrDefault(job.JobId), Ended(job.JobId, state));
    }

    /// <summary>A TCP Camdoop job: its streams as vertices, bytes in as what its reducers and vertices took in.</summary>
    private JobStats Stats(DirectJob job, bool removed)
    {
        var state = StateOf(job.Failure, job.IsFinished || job.CompletedEverywhere, removed);
        return new JobStats(job.JobId, job.Job.Name, state, job.Description.ReduceTasks, job.Streams, job.StreamsDone,
            job.CompletedReduceTasks.Count, job.ReducedBytes + job.MergedBytes, job.BytesSent, job.MergedBytes - job.ForwardedBytes, 0, 0,
            Output(job.Description), job.CompletedReduceTasks.Sum(r => r.FileBytes), _started.GetValueOrDefault(job.JobId), Ended(job.JobId, state));
    }

    private static JobState StateOf(string? failure, bool finished, bool removed) =>
        failure is not null ? JobState.Failed
        : finished ? JobState.Finished
        : removed ? JobState.Stopped
        : JobState.Running;

    // A job's end here is when it was first seen over (a round, or its removal).
    private long Ended(ulong jobId, JobState state)
    {
        long ended = 0;
        if (state != JobState.Running && !_ended.TryGetValue(jobId, out ended))
        {
            ended = Now();
            _ended[jobId] = ended;
        }
        return ended;
    }

    /// <summary>The output directory under a server's data directory (ServerJob.OutputPath), or "discarded".</summary>
    private static string Output(JobDescription description) => description.Output.Kind switch
    {
        OutputKind.Discard => "discarded",
        _ when description.Output.Directory.Length > 0 => description.Output.Directory,
        _ => $"jobs/{description.JobId.ToString("x16", CultureInfo.InvariantCulture)}/output",
    };

    private long Now() => _camdoop.Context.UnixTimeMilliseconds;
}

using System.Globalization;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Monitoring.Jobs;
using Camdoop.Runtime.Topology;

namespace Camdoop.Server;

/// <summary>
/// The jobs of a server's <see cref="CamdoopService"/>: their vertices' progress and bytes, and the limits and
/// frame bytes of its shuffle transport's per-port schedulers. Lives with the server's stack, which knows both
/// services, so that monitoring need not know the MapReduce engine. A job the service forgets (at its end, or killed)
/// stays in a history of the last <see cref="HistoryLength"/> ended here, as it was then, so that the jobs table (and
/// the web view's Jobs panel) still shows what ran.
/// </summary>
public sealed class CamdoopJobSource : IJobSource
{
    /// <summary>Ended jobs a server remembers; the oldest goes first.</summary>
    public const int HistoryLength = 50;

    private readonly CamdoopService _camdoop;
    private readonly Dictionary<ulong, long> _started = [];
    private readonly Dictionary<ulong, long> _ended = [];
    private readonly Queue<JobStats> _history = new();

    public CamdoopJobSource(CamdoopService camdoop)
    {
        _camdoop = camdoop ?? throw new ArgumentNullException(nameof(camdoop));
        _camdoop.JobStarted += job => _started[job.JobId] = Now();
        _camdoop.JobRemoving += Remember;
    }

    public IReadOnlyList<JobStats> Snapshot()
    {
        var jobs = new List<JobStats>(_camdoop.Jobs.Count + _history.Count);
        foreach (var job in _camdoop.Jobs)
        {
            jobs.Add(Stats(job, removed: false));
        }
        jobs.AddRange(_history);
        return jobs;
    }

    public void SetLimit(ulong jobId, long bytesPerSecond, int portMask) => _camdoop.Transport.SetJobLimit(jobId, bytesPerSecond, portMask);

    /// <summary>Keeps a job the service is about to forget, with its state and counters as they are now.</summary>
    private void Remember(ServerJob job)
    {
        var stats = Stats(job, removed: true);
        _started.Remove(job.JobId);
        _ended.Remove(job.JobId);
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
        var state = job.Failure is not null ? JobState.Failed
            : job.IsFinished ? JobState.Finished
            : removed ? JobState.Stopped
            : JobState.Running;
        long limit = 0;
        long frameBytes = 0;
        foreach (var port in Ports.All)
        {
            limit = Math.Max(limit, _camdoop.Transport.JobLimit(job.JobId, port));
            frameBytes += _camdoop.Transport.Scheduler(port).JobBytesSent(job.JobId);
        }
        // A job's end here is when it was first seen over (a round, or its removal).
        long ended = 0;
        if (state != JobState.Running && !_ended.TryGetValue(job.JobId, out ended))
        {
            ended = Now();
            _ended[job.JobId] = ended;
        }
        return new JobStats(job.JobId, job.Job.Name, state, job.Description.ReduceTasks, vertices, done,
            job.CompletedReduceTasks.Count, bytesIn, bytesOut, job.AggregatedBytes, limit, frameBytes,
            Output(job.Description), job.CompletedReduceTasks.Sum(r => r.FileBytes), _started.GetValueOrDefault(job.JobId), ended);
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

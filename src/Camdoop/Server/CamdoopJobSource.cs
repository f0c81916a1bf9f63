using Camdoop.MapReduce.Service;
using Camdoop.Monitoring.Jobs;
using Camdoop.Runtime.Topology;

namespace Camdoop.Server;

/// <summary>
/// The jobs of a server's <see cref="CamdoopService"/>: their vertices' progress and bytes, and the limits and
/// frame bytes of its shuffle transport's per-port schedulers. Lives with the server's stack, which knows both
/// services, so that monitoring need not know the MapReduce engine.
/// </summary>
public sealed class CamdoopJobSource(CamdoopService camdoop) : IJobSource
{
    private readonly CamdoopService _camdoop = camdoop ?? throw new ArgumentNullException(nameof(camdoop));

    public IReadOnlyList<JobStats> Snapshot()
    {
        var jobs = new List<JobStats>(_camdoop.Jobs.Count);
        foreach (var job in _camdoop.Jobs)
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
            var state = job.Failure is not null ? JobState.Failed : job.IsFinished ? JobState.Finished : JobState.Running;
            long limit = 0;
            long frameBytes = 0;
            foreach (var port in Ports.All)
            {
                limit = Math.Max(limit, _camdoop.Transport.JobLimit(job.JobId, port));
                frameBytes += _camdoop.Transport.Scheduler(port).JobBytesSent(job.JobId);
            }
            jobs.Add(new JobStats(job.JobId, job.Job.Name, state, job.Description.ReduceTasks, vertices, done,
                job.CompletedReduceTasks.Count, bytesIn, bytesOut, job.AggregatedBytes, limit, frameBytes));
        }
        return jobs;
    }

    public void SetLimit(ulong jobId, long bytesPerSecond, int portMask) => _camdoop.Transport.SetJobLimit(jobId, bytesPerSecond, portMask);
}

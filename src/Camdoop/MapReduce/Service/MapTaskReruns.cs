using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// The map tasks of failed servers that one job runs again on this server (the Camdoop paper, §4.2), by server and
/// source: a failed server's map output is lost with it, so the owner of a map task's id in the job's view runs the
/// task again, when it learns of the failure or when the first request for the task's output comes. Requests that come
/// before the output is ready wait for it.
/// </summary>
internal sealed class MapTaskReruns(ServerJob job, CamdoopService service, JobView view)
{
    private readonly Dictionary<(int Server, int Source), RerunMapTask> _reruns = [];

    public int Count => _reruns.Count;

    public Dictionary<(int Server, int Source), RerunMapTask>.ValueCollection Tasks => _reruns.Values;

    /// <summary>The leaf here that sends stream <paramref name="id"/> of a map task run again, or null.</summary>
    public Vertex? Leaf(in StreamId id) =>
        _reruns.GetValueOrDefault((job.Placement.Torus.IndexOf(id.Child), id.Source))?.Leaf(id.ReduceTask, id.Tree);

    /// <summary>Runs again the map tasks of the <paramref name="lost"/> servers whose ids the view gives to this server.</summary>
    public void RunOwned(List<Coordinate> lost)
    {
        foreach (var server in lost)
        {
            var ids = job.MapTasks.MapTasksOf(server);
            for (int j = 0; j < ids.Count; j++)
            {
                if (view.IsOwnedHere(ids[j]))
                {
                    Ensure(server, (byte)(j + 1));
                }
            }
        }
    }

    /// <summary>The re-run of map task <paramref name="source"/> of <paramref name="server"/> here, started if it was not.</summary>
    public RerunMapTask Ensure(Coordinate server, byte source)
    {
        var key = (job.Placement.Torus.IndexOf(server), (int)source);
        if (_reruns.TryGetValue(key, out var rerun))
        {
            return rerun;
        }
        var id = job.MapTasks.MapTasksOf(server)[source - 1];
        rerun = new RerunMapTask(job, server, source);
        _reruns[key] = rerun;
        job.Transport.Counters.MapTasksRerun++;
        job.Log($"runs map task {source} of failed server {server.Name} again");
        job.MapTasks.Rerun(id, server, (output, error) => OnDone(rerun, output, error));
        return rerun;
    }

    private void OnDone(RerunMapTask rerun, MapOutput? output, string? error)
    {
        if (job.Failure is not null)
        {
            output?.Dispose();
            return;
        }
        if (output is null)
        {
            service.FailJob(job, $"map task {rerun.Source} of failed server {rerun.Server.Name} could not run again here: {error}");
            return;
        }
        rerun.Output = output;
        foreach (var ((r, t), (point, requester, epoch)) in rerun.Waiting)
        {
            job.RestartOutput(rerun.Leaf(r, t, create: true)!, point, requester, epoch);
        }
        rerun.Waiting.Clear();
        service.FlushAfterRecovery();
    }

    /// <summary>Drops the leaves of reduce task <paramref name="reduceTask"/>: it starts over on new trees.</summary>
    public void DropTask(int reduceTask)
    {
        foreach (var rerun in _reruns.Values)
        {
            foreach (var leaf in rerun.RemoveLeaves(reduceTask))
            {
                job.Drop(leaf);
            }
        }
    }

    /// <summary>The job is dropped here: the map outputs run again go.</summary>
    public void Release()
    {
        foreach (var rerun in _reruns.Values)
        {
            rerun.Output?.Dispose();
        }
    }
}

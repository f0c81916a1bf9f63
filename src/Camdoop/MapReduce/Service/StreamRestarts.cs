using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// The requests to restart a stream that one job's part on this server receives (the Camdoop paper, §4.2). The vertex
/// that sends the stream answers: this server's own, one it takes over from a failed server, or a leaf of a failed
/// server's map task it runs again; its output starts a new epoch for the requester. A request ahead of this server's
/// view (about a server not known here to be lost yet, or of a reduce task's generation not started here yet) is kept
/// and answered as soon as the view catches up, rather than at the requester's next retry.
/// </summary>
internal sealed class StreamRestarts(ServerJob job, CamdoopService service, JobView view, AdoptedVertices adopted, MapTaskReruns reruns)
{
    private readonly Dictionary<StreamId, (ResumePoint Point, Coordinate Requester, byte Epoch)> _deferred = [];

    /// <summary>A parent's request to restart one of this server's streams (or one it now owns).</summary>
    public void OnRequest(in ResumeRequest request)
    {
        var counters = job.Transport.Counters;
        counters.ResumesReceived++;
        var id = request.Stream;
        if ((uint)id.ReduceTask >= (uint)job.Description.ReduceTasks || (id.Child == job.RootOf(id.ReduceTask) && id.Source == 0))
        {
            counters.UnknownStream++;
            return;
        }
        var point = request.HasKey ? ResumePoint.After(request.Key, request.Skip) : ResumePoint.Start;
        Resume(id, point, request.Requester, request.KnownEpoch);
    }

    /// <summary>Answers the requests kept while this server's view lagged (those still ahead of it are kept again).</summary>
    public void AnswerDeferred()
    {
        if (_deferred.Count > 0)
        {
            var deferred = _deferred.ToList();
            _deferred.Clear();
            foreach (var (id, (point, requester, epoch)) in deferred)
            {
                Resume(id, point, requester, epoch);
            }
        }
    }

    /// <summary>
    /// Reduce task <paramref name="reduceTask"/> starts over as <paramref name="generation"/>: requests of older
    /// generations go. Those of the generation being built stay: they came from servers that started it over first.
    /// </summary>
    public void DropDeferred(int reduceTask, int generation)
    {
        foreach (var (id, _) in _deferred.Where(d => d.Key.ReduceTask == reduceTask && ShuffleWire.Generation(d.Value.Epoch) < generation).ToList())
        {
            _deferred.Remove(id);
        }
    }

    private void Resume(StreamId id, ResumePoint point, Coordinate requester, byte knownEpoch)
    {
        var counters = job.Transport.Counters;
        int generation = ShuffleWire.Generation(knownEpoch), current = job.GenerationOf(id.ReduceTask);
        if (generation < current)
        {
            counters.StaleResumes++; // from a parent that has not started the reduce task over yet: it asks again then
            return;
        }
        if (generation > current)
        {
            // The requester knows the task's root is lost and this server does not yet: answering now would restart a
            // stream of the generation about to be torn down. Answered once this server starts the task over too.
            _deferred[id] = (point, requester, knownEpoch);
            return;
        }
        Vertex? vertex;
        if (id.Source == 0)
        {
            vertex = job.SenderOf(id);
            if (vertex is null)
            {
                if (view.Contains(id.Child))
                {
                    _deferred[id] = (point, requester, knownEpoch); // its server is not known here to be lost yet
                    return;
                }
                if (!view.IsOwnedHere(job.Placement.VertexKey(id.Child, id.ReduceTask, id.Tree, job.RootOf(id.ReduceTask))))
                {
                    counters.UnknownStream++; // not ours to take over: the parent asks the owner it sees next
                    return;
                }
                vertex = adopted.Adopt(id.ReduceTask, id.Tree, id.Child);
            }
        }
        else
        {
            var ids = job.MapTasks.MapTasksOf(id.Child);
            if (id.Source > ids.Count)
            {
                counters.UnknownStream++;
                return;
            }
            if (view.Contains(id.Child))
            {
                _deferred[id] = (point, requester, knownEpoch);
                return;
            }
            if (!view.IsOwnedHere(ids[id.Source - 1]))
            {
                counters.UnknownStream++;
                return;
            }
            var rerun = reruns.Ensure(id.Child, id.Source);
            if (rerun.Output is null)
            {
                rerun.Waiting[(id.ReduceTask, id.Tree)] = (point, requester, knownEpoch);
                return;
            }
            vertex = rerun.Leaf(id.ReduceTask, id.Tree, create: true)!;
        }
        Restart(vertex, point, requester, knownEpoch);
    }

    /// <summary>Restarts <paramref name="vertex"/>'s output for <paramref name="requester"/> at <paramref name="point"/>, unless it already did.</summary>
    public void Restart(Vertex vertex, ResumePoint point, Coordinate requester, byte knownEpoch)
    {
        var counters = job.Transport.Counters;
        if (vertex.LastResumePoint is { } last && vertex.LastResumeRequester == requester)
        {
            if (vertex.LastResumeEpoch == knownEpoch && last.SameAs(point))
            {
                return; // the same request again (a retry): it is being answered
            }
            if (knownEpoch < vertex.LastResumeEpoch && ShuffleWire.Generation(knownEpoch) == ShuffleWire.Generation(vertex.LastResumeEpoch))
            {
                // A parent's every new request names a later epoch: this one was overtaken by one already answered (it
                // came late, over a longer route). Answering it would start a stream the parent no longer takes.
                counters.StaleResumes++;
                return;
            }
        }
        vertex.LastResumePoint = point;
        vertex.LastResumeRequester = requester;
        vertex.LastResumeEpoch = knownEpoch;
        var output = vertex.Output;
        byte epoch = (byte)(Math.Max(output.Epoch, knownEpoch) + 1);
        if (ShuffleWire.Generation(epoch) != ShuffleWire.Generation(output.Epoch))
        {
            service.FailJob(job, $"stream {output.Id.ReduceTask}/{output.Id.Tree}/{output.Id.Child.Name} restarted 16 times");
            return;
        }
        output.Destination = job.Placement.VertexId(requester);
        vertex.OutputHost = job.Placement.Torus.IndexOf(requester);
        job.Transport.Move(output, job.FirstHop(vertex.OutputHost, output.Port));
        long kept = counters.RestartsFromKept;
        if (vertex.Restart(point, epoch))
        {
            job.OnVertexRestarted();
        }
        job.Log($"stream {output.Id.ReduceTask}/{output.Id.Tree}/{output.Id.Child.Name}/{output.Id.Source} restarts for {requester.Name} as epoch {epoch} "
            + (counters.RestartsFromKept > kept ? "from the bytes it kept" : "regenerated") + (point.HasKey ? "" : " from the start"));
        service.OnJobProgress(job);
    }
}

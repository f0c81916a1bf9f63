using Camdoop.MapReduce.Trees;

namespace Camdoop.MapReduce.Service;

// Root failure (the Camdoop paper, §4.2): a reduce task whose root reducer is lost before it wrote its output cannot
// resume, as the reducer's state is gone. Every server starts the task over as its next generation, on new trees.
public sealed partial class ServerJob
{
    /// <summary>
    /// Reduce task <paramref name="reduceTask"/>'s root failed before it finished: the task starts over as its next
    /// generation, rooted at <see cref="JobPlacement.NextRoot"/>. Every server drops its part of the task and builds it
    /// anew on the new trees, from the first record of every map output: all that the failed reducer held is lost
    /// with it, so nothing it wrote is counted, and nothing of the new generation before its start either.
    /// </summary>
    private void Reroot(int reduceTask)
    {
        var failed = RootOf(reduceTask);
        if (_generation[reduceTask] == 15)
        {
            _service.FailJob(this, $"reduce task {reduceTask} lost its root 16 times");
            return;
        }
        _generation[reduceTask]++;
        _rootOf[reduceTask] = Placement.NextRoot(reduceTask, _generation[reduceTask], failed, _view.Servers);
        PrepareToContinue(reduceTask, failed);
        var sent = new long[TreeTopology.TreeCount];
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            sent[t] = Vertex(reduceTask, t)?.Output.SentHigh ?? 0;
        }
        TearDown(reduceTask);
        BuildReduceTask(reduceTask);
        // With replicated output the new root may go on from its replica and ask every stream for the records after a
        // key far ahead: windows stay at their initial two segments until then, so that little is sent from the start
        // in vain.
        bool advertise = !Description.ReplicateOutput;
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            if (Vertex(reduceTask, t) is { } vertex)
            {
                vertex.Output.CountAsResent(sent[t]);
                Transport.Register(vertex.Output);
                StartVertex(vertex, advertise);
            }
        }
        if (_replicas.TryGetValue(reduceTask, out var replica))
        {
            StartVertex(replica);
        }
        if (_roots.TryGetValue(reduceTask, out var root))
        {
            StartVertex(root, advertise);
            StartReplicating(root);
            Transport.Counters.VerticesAdopted++;
            Log($"reduce task {reduceTask} starts over here: its root {failed.Name} failed");
        }
    }

    /// <summary>
    /// Drops this server's part of reduce task <paramref name="reduceTask"/>: vertices, root reducer, replica, vertices
    /// taken over, leaves of map tasks run again, and restart requests of older generations.
    /// </summary>
    private void TearDown(int reduceTask)
    {
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            ref var vertex = ref _vertices[(reduceTask * TreeTopology.TreeCount) + t];
            if (vertex is not null)
            {
                Drop(vertex);
                vertex = null;
            }
        }
        if (_roots.Remove(reduceTask, out var root))
        {
            Drop(root);
            root.Output.Dispose();
            if (root.StopReplicating() is { } stream)
            {
                Transport.Forget(stream);
            }
        }
        if (_replicas.Remove(reduceTask, out var replica))
        {
            DropReplica(replica);
        }
        _adopted.DropTask(reduceTask);
        _reruns.DropTask(reduceTask);
        _restarts.DropDeferred(reduceTask, _generation[reduceTask]);
    }
}

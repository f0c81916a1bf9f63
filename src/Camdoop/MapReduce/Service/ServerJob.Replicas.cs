using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

// Replicated output (JobDescription.ReplicateOutput): every root reducer streams what it writes to the server its
// reduce task would start over on if the root failed now (JobPlacement.NextRoot, in the job's view). That server keeps
// the replica; when the root fails, it starts the task over with the replica as its output and asks for the records
// after the replica's last key only. Were the view to have changed in between (another server lost), the new root may
// be another server: it then starts from the beginning, as without replication. A root whose replica's server is lost
// goes on without one, and so does a root that went on from a replica.
public sealed partial class ServerJob
{
    private readonly Dictionary<int, OutputReplica> _replicas = [];

    // The replica a reduce task starting over here continues from (set by Reroot for BuildReduceTask).
    private OutputReplica? _continuing;

    /// <summary>The output replicas kept here.</summary>
    public IEnumerable<OutputReplica> OutputReplicas => _replicas.Values;

    /// <summary>The server reduce task <paramref name="reduceTask"/> would start over on if its root failed now.</summary>
    private Coordinate ReplicaServer(int reduceTask) =>
        Placement.NextRoot(reduceTask, _generation[reduceTask] + 1, _rootOf[reduceTask], _view.Servers);

    /// <summary>Builds the replica this server keeps of reduce task <paramref name="reduceTask"/>'s output, if any.</summary>
    private void BuildReplica(int reduceTask)
    {
        var root = _rootOf[reduceTask];
        if (!Description.ReplicateOutput || root == Self || ReplicaServer(reduceTask) != Self)
        {
            return;
        }
        int host = Placement.Torus.IndexOf(root);
        var stream = new InboundStream(JobId, reduceTask, JobPlacement.RootTree, root, Placement.VertexId(root), FirstHop(host, Port.XPlus), 0,
            epoch: ShuffleWire.FirstEpoch(_generation[reduceTask]))
        {
            ChildHost = host,
        };
        InboundStreams++;
        string? path = PartPath(reduceTask) is { } part ? part + ".replica" : null;
        _replicas[reduceTask] = new OutputReplica(this, reduceTask, root, stream, ReduceOutput.ForReplica(Job, path));
    }

    /// <summary>Opens the stream from root reducer <paramref name="root"/> to the server keeping its replica.</summary>
    private void StartReplicating(RootReducer root)
    {
        if (!Description.ReplicateOutput || root.Replica is not null || root.IsFinished || root.ContinuesReplica)
        {
            // A reducer that went on from a replica has written a part of its output no stream of its own carried: a
            // replica of the rest alone could not take over, so it goes on without one.
            return;
        }
        var server = ReplicaServer(root.ReduceTask);
        if (server == Self)
        {
            return; // no other server is left
        }
        int host = Placement.Torus.IndexOf(server);
        var stream = new OutboundStream(JobId, root.ReduceTask, JobPlacement.RootTree, Self, Placement.VertexId(server), FirstHop(host, Port.XPlus),
            Options.Shuffle.InitialWindowBytes, Options.Shuffle.MaxWindowBytes, Transport.Buffers, epoch: ShuffleWire.FirstEpoch(_generation[root.ReduceTask]));
        Transport.Register(stream);
        root.ReplicateTo(stream, host);
        Log($"reduce task {root.ReduceTask} replicates its output to {server.Name}");
    }

    /// <summary>An acknowledgement of a root reducer's replica stream.</summary>
    private void OnReplicaAck(in AckEntry ack)
    {
        var root = _roots.GetValueOrDefault(ack.ReduceTask);
        var stream = root?.Replica;
        if (stream is null || ack.Child != Self || ack.Source != 0)
        {
            Transport.Counters.UnknownStream++;
            return;
        }
        if (!TryApplyAck(stream, ack, out bool progress))
        {
            return;
        }
        if (progress && !stream.SourceDone)
        {
            MarkDirty(root!);
        }
    }

    /// <summary>Root reducers here whose replica's server was lost go on without one.</summary>
    private void LoseReplicaServers()
    {
        foreach (var root in _roots.Values)
        {
            if (root.ReplicaHost >= 0 && !_view.Contains(root.ReplicaHost) && root.StopReplicating() is { } stream)
            {
                Transport.Forget(stream);
                Log($"reduce task {root.ReduceTask} lost the server of its output's replica: it goes on without one");
            }
        }
    }

    /// <summary>
    /// Reduce task <paramref name="reduceTask"/>, whose root <paramref name="failed"/> was lost, starts over here: the
    /// replica kept here, if it is of that root, becomes its output (see <see cref="BuildReduceTask"/>).
    /// </summary>
    private void PrepareToContinue(int reduceTask, Coordinate failed)
    {
        if (_rootOf[reduceTask] == Self && _replicas.Remove(reduceTask, out var replica))
        {
            if (replica.Root == failed && !replica.IsFinished)
            {
                _continuing = replica;
            }
            else
            {
                DropReplica(replica);
            }
        }
    }

    /// <summary>The new root reducer continues the replica's output, its file renamed to <paramref name="path"/>, from the last key it holds.</summary>
    private ReduceOutput? ContinueFromReplica(int reduceTask, string? path, out ResumePoint? point)
    {
        point = null;
        var replica = _continuing;
        if (replica is null || replica.ReduceTask != reduceTask)
        {
            return null;
        }
        _continuing = null;
        Transport.Forget(replica.Stream);
        InboundStreams--;
        point = replica.Output.TakeOver(path);
        Log($"reduce task {reduceTask} goes on from its output's replica: {replica.Output.Records} records held, "
            + (point.HasKey ? "the rest is asked for" : "nothing held: everything is asked for"));
        return replica.Output;
    }

    /// <summary>
    /// The root's output is complete and its replica has all of it: the copy is not needed any more. The stream stays,
    /// so that a repeated FIN is still acknowledged.
    /// </summary>
    internal void OnReplicaComplete(OutputReplica replica)
    {
        replica.Output.Dispose();
        if (replica.Output.Path is { } path)
        {
            File.Delete(path);
        }
    }

    private void DropReplica(OutputReplica replica)
    {
        Drop(replica);
        OnReplicaComplete(replica);
    }

    /// <summary>The job is over here: replicas still kept are dropped, with their files.</summary>
    internal void ReleaseReplicas()
    {
        foreach (var replica in _replicas.Values)
        {
            DropReplica(replica);
        }
        _replicas.Clear();
    }
}

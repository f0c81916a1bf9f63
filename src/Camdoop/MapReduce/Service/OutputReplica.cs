using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// A copy of a root reducer's output, kept by the server its reduce task would start over on
/// (<see cref="JobPlacement.NextRoot"/>) while the root writes it (<see cref="Jobs.Control.JobDescription.ReplicateOutput"/>). The
/// root streams its output here over the shuffle's reliable transport (stream tree <see cref="JobPlacement.RootTree"/>),
/// and the replica applies it one whole key group at a time. When the root fails, this server becomes the new root and
/// its reducer goes on from the replica: it asks its children only for the records after the last key the replica
/// holds, rather than for everything again (beyond the Camdoop paper, §4.2, which restarts a failed reduce task).
/// </summary>
public sealed class OutputReplica : VertexBase
{
    public OutputReplica(ServerJob owner, int reduceTask, Coordinate root, InboundStream stream, ReduceOutput output)
        : base(owner, reduceTask, JobPlacement.RootTree, owner.Self, [stream], [], MergeMode.Merge)
    {
        Root = root;
        Stream = stream;
        Output = output;
    }

    /// <summary>The root reducer's server whose output this is.</summary>
    public Coordinate Root { get; }

    public InboundStream Stream { get; }

    public ReduceOutput Output { get; }

    public override void Start()
    {
    }

    /// <summary>Applies what arrived (never held back: the replica only writes) and reopens the window.</summary>
    public override void Pump()
    {
        if (IsFinished)
        {
            return;
        }
        var held = Stream.Stashed;
        if (!held.IsEmpty)
        {
            Output.Write(held);
            Stream.ReleaseStash(Owner.Transport.Buffers);
        }
        UpdateWindows();
        if (Stream.FinReceived)
        {
            Output.Complete();
            IsFinished = true;
            Owner.OnReplicaComplete(this);
        }
    }
}

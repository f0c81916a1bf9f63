using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

// Failure recovery (the Camdoop paper, §4.2). Everything a job does is named by keys: a vertex by (reduce task, tree,
// the server it sits on in the tree), a map task by its id. A failed server's keys move to live servers by the same
// deterministic remap on every server, in the job's view (JobView: the servers up when it started, less every one lost
// since; a server that comes back does not rejoin the job). The protocol is driven by parents:
// - a parent whose child's server is lost asks the child's new owner to restart the stream after the last complete
//   record it holds (ResumeRequests); the new owner takes the vertex over (AdoptedVertices) and asks the vertex's
//   children, in turn, for their records from that key (a map task of the failed server is run again where its id now
//   maps: MapTaskReruns); the requests a server receives are answered there (StreamRestarts);
// - a child whose parent's server is lost stops sending and waits for the parent's new host to ask;
// - a reduce task whose root's server is lost starts over, on every server, as its next generation: on new trees
//   rooted two hops away (JobPlacement.NextRoot), every vertex sending its whole stream again (ServerJob.Reroot.cs).
// A child that kept enough of its output starts again from those bytes; otherwise it merges (or reads) again from the
// key. Streams are sorted, so records before the point are never sent twice and none after it is lost.
public sealed partial class ServerJob
{
    private readonly JobView _view;
    private readonly AdoptedVertices _adopted;
    private readonly MapTaskReruns _reruns;
    private readonly ResumeRequests _resumeRequests;
    private readonly StreamRestarts _restarts;
    private readonly HashSet<int> _doneReduceTasks = [];

    /// <summary>Whether <paramref name="server"/> still takes part in the job in this server's view.</summary>
    public bool IsInJob(Coordinate server) => _view.Contains(server);

    /// <summary>Vertices and root reducers of failed servers hosted here.</summary>
    public int AdoptedCount => _adopted.Count + _roots.Values.Count(r => r.IsAdopted);

    /// <summary>Map tasks of failed servers run again here.</summary>
    public int RerunCount => _reruns.Count;

    /// <summary>
    /// Reduce task <paramref name="reduceTask"/> has written its whole output somewhere: if its root's server fails
    /// later, nobody starts it over (the job's coordinator tells every server).
    /// </summary>
    public void NoteReduceTaskDone(int reduceTask) => _doneReduceTasks.Add(reduceTask);

    /// <summary>
    /// Servers became unreachable: they leave the job for good. Children of theirs resume at the new owners, outputs
    /// to them wait, their root reducers and map tasks that now map here start here.
    /// </summary>
    internal void OnServersLost(IReadOnlyList<Coordinate> lost)
    {
        var newlyLost = _view.Remove(lost);
        if (newlyLost.Count == 0 || Failure is not null)
        {
            return;
        }
        for (int r = 0; r < Description.ReduceTasks; r++)
        {
            if (!_doneReduceTasks.Contains(r) && !IsInJob(RootOf(r)))
            {
                Reroot(r);
            }
        }
        _adopted.DropForeign();
        LoseReplicaServers();
        foreach (var parent in HostedParents())
        {
            foreach (var child in parent.Children)
            {
                if (child.FinReceived)
                {
                    continue;
                }
                if (child.PendingResume is not null)
                {
                    if (_resumeRequests.TargetOf(child) != child.ResumeTarget)
                    {
                        _resumeRequests.Send(parent, child); // the owner asked may be gone: ask the new one
                    }
                }
                else if (child.ChildHost < 0 || !_view.Contains(child.ChildHost))
                {
                    parent.OnChildLost(child);
                }
            }
        }
        foreach (var vertex in HostedSenders())
        {
            if (vertex.OutputHost >= 0 && !_view.Contains(vertex.OutputHost) && !vertex.Output.Suspended)
            {
                vertex.Output.Suspend();
            }
        }
        _reruns.RunOwned(newlyLost);
        UpdatePorts();
        _restarts.AnswerDeferred();
        _service.OnJobProgress(this);
    }

    /// <summary>Every vertex hosted here that has children: own and adopted vertices, root reducers.</summary>
    private IEnumerable<VertexBase> HostedParents()
    {
        foreach (var v in _vertices)
        {
            if (v is not null && v.Children.Count > 0)
            {
                yield return v;
            }
        }
        foreach (var v in _adopted.Vertices)
        {
            yield return v;
        }
        foreach (var r in _roots.Values)
        {
            yield return r;
        }
    }

    /// <summary>Every vertex hosted here that sends a stream: own and adopted vertices, leaves of map tasks run again.</summary>
    private IEnumerable<Vertex> HostedSenders() => Vertices;

    /// <summary>Whether <paramref name="vertex"/> is still part of the job here (not dropped by a later view or a restart of its task).</summary>
    internal bool IsHosted(VertexBase vertex) => vertex switch
    {
        RootReducer root => _roots.GetValueOrDefault(root.ReduceTask) == root,
        Vertex v when v.Home == Self => true,
        Vertex v => _adopted.Find(v.ReduceTask, v.Tree, Placement.Torus.IndexOf(v.Home)) == v,
        _ => false,
    };

    /// <summary>A parent's request to restart one of this server's streams (or one it now owns).</summary>
    internal void OnResume(in ResumeRequest request) => _restarts.OnRequest(request);

    /// <summary>Asks the owner of <paramref name="child"/>'s sender to restart it at its pending point (and again until it does).</summary>
    internal void RequestResume(VertexBase parent, InboundStream child) => _resumeRequests.Send(parent, child);

    /// <summary>A map task run again here has its output: a request that waited for it restarts <paramref name="leaf"/>'s output.</summary>
    internal void RestartOutput(Vertex leaf, ResumePoint point, Coordinate requester, byte knownEpoch) =>
        _restarts.Restart(leaf, point, requester, knownEpoch);

    /// <summary>The restart a parent asked for began: acks now go to the server its segments come from.</summary>
    internal void OnChildRestarted(InboundStream child, Coordinate sender)
    {
        int host = Placement.Torus.IndexOf(sender);
        child.ChildHost = host;
        child.ChildVertexId = Placement.VertexId(sender);
        child.ResumeTarget = -1;
        Transport.Move(child, FirstHop(host, child.Port));
    }

    /// <summary>
    /// After a route change: each stream leaves on the first hop of a shortest live path to the server it talks to (its
    /// tree link while that is one), so a cut cable or a far parent does not stall it.
    /// </summary>
    internal void UpdatePorts()
    {
        var transport = Transport;
        foreach (var vertex in HostedSenders())
        {
            if (vertex.OutputHost >= 0)
            {
                transport.Move(vertex.Output, FirstHop(vertex.OutputHost, vertex.Output.Port));
            }
        }
        foreach (var parent in HostedParents())
        {
            foreach (var child in parent.Children)
            {
                if (child.ChildHost >= 0)
                {
                    transport.Move(child, FirstHop(child.ChildHost, child.Port));
                }
            }
        }
    }

    /// <summary>The port toward <paramref name="server"/>: <paramref name="preferred"/> if it starts a shortest live path.</summary>
    internal Port FirstHop(int server, Port preferred)
    {
        var context = Transport.Context;
        if (server == _selfIndex)
        {
            // Delivered here without a link; any live port's queue paces it.
            return context.IsLinkUp(preferred) ? preferred : FirstLivePort(preferred);
        }
        byte mask = Transport.Router.NextHopPorts(Placement.Torus.CoordinateOf(server));
        if (mask == 0 || (mask & (1 << (int)preferred)) != 0)
        {
            return preferred;
        }
        return (Port)System.Numerics.BitOperations.TrailingZeroCount(mask);
    }

    private Port FirstLivePort(Port fallback)
    {
        foreach (var port in Ports.All)
        {
            if (Transport.Context.IsLinkUp(port))
            {
                return port;
            }
        }
        return fallback;
    }

    /// <summary>A vertex built after the job started (taken over, or a leaf of a map task run again): the job waits for it.</summary>
    internal void Host(Vertex vertex)
    {
        _unfinishedVertices++;
        Transport.Register(vertex.Output);
    }

    /// <summary>A vertex that had finished restarted its output: the job waits for it again.</summary>
    internal void OnVertexRestarted() => _unfinishedVertices++;

    /// <summary>Forgets one vertex: its merger, stashes and streams go back, its job no longer waits for it.</summary>
    internal void Drop(VertexBase vertex)
    {
        vertex.Discard();
        foreach (var child in vertex.Children)
        {
            Transport.Forget(child);
            InboundStreams--;
        }
        if (vertex is Vertex v)
        {
            if (!v.IsFinished)
            {
                _unfinishedVertices--;
            }
            Transport.Forget(v.Output);
        }
    }
}

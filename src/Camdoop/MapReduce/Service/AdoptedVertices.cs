using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// The vertices of failed servers that one job's part on this server took over (the Camdoop paper, §4.2), by reduce
/// task, tree and home server. A vertex comes here when a parent asks to restart its stream and the job's view gives
/// its key to this server; it goes when a later view gives the key to another server, or when its reduce task starts
/// over.
/// </summary>
internal sealed class AdoptedVertices(ServerJob job, CamdoopService service, JobView view)
{
    private readonly Dictionary<(int R, int Tree, int Home), Vertex> _vertices = [];

    public int Count => _vertices.Count;

    public Dictionary<(int R, int Tree, int Home), Vertex>.ValueCollection Vertices => _vertices.Values;

    /// <summary>Vertex (<paramref name="reduceTask"/>, <paramref name="tree"/>) of server index <paramref name="home"/>, if taken over here.</summary>
    public Vertex? Find(int reduceTask, int tree, int home) => _vertices.GetValueOrDefault((reduceTask, tree, home));

    /// <summary>
    /// Takes over vertex (<paramref name="reduceTask"/>, <paramref name="tree"/>) of failed server
    /// <paramref name="home"/>: its children are the home's children in the tree and the home's map tasks, each a
    /// stream of its own; its output waits for a restart request.
    /// </summary>
    public Vertex Adopt(int reduceTask, int tree, Coordinate home)
    {
        var placement = job.Placement;
        var torus = placement.Torus;
        var root = job.RootOf(reduceTask);
        byte epoch = ShuffleWire.FirstEpoch(job.GenerationOf(reduceTask));
        var children = new List<InboundStream>();
        Span<Port> ports = stackalloc Port[Ports.Count];
        int count = placement.Trees.GetChildPorts(root, home, tree, ports);
        for (int i = 0; i < count; i++)
        {
            AddChild(children, reduceTask, tree, torus.Neighbour(home, ports[i]), 0, epoch);
        }
        int mapTasks = job.MapTasks.MapTasksOf(home).Count;
        for (int j = 1; j <= mapTasks; j++)
        {
            AddChild(children, reduceTask, tree, home, (byte)j, epoch);
        }
        var parentPort = placement.Trees.ParentPort(root, home, tree)!.Value;
        var shuffle = job.Options.Shuffle;
        var output = new OutboundStream(job.JobId, reduceTask, tree, home, placement.VertexId(job.Self), parentPort, shuffle.InitialWindowBytes,
            shuffle.MaxWindowBytes, job.Transport.Buffers, epoch: epoch);
        output.Suspend();
        output.SetRetention(job.RetentionBytes);
        var vertex = new Vertex(job, reduceTask, tree, home, [.. children], [], job.VertexMode, output);
        _vertices[(reduceTask, tree, torus.IndexOf(home))] = vertex;
        job.Log($"takes over vertex {reduceTask}/{tree} of failed server {home.Name}");
        job.Host(vertex);
        job.Transport.Counters.VerticesAdopted++;
        service.OnJobProgress(job);
        return vertex;
    }

    private void AddChild(List<InboundStream> children, int reduceTask, int tree, Coordinate child, byte source, byte epoch)
    {
        var stream = new InboundStream(job.JobId, reduceTask, tree, child, job.Placement.VertexId(child), Port.XPlus, children.Count, source, epoch);
        stream.TrackRecords();
        children.Add(stream);
        job.InboundStreams++;
    }

    /// <summary>Drops the vertices whose keys another server owns in the view now (views differ for a moment): theirs, not ours.</summary>
    public void DropForeign()
    {
        foreach (var (key, vertex) in _vertices.ToList())
        {
            if (!view.IsOwnedHere(vertex.OwnerKey))
            {
                _vertices.Remove(key);
                job.Drop(vertex);
            }
        }
    }

    /// <summary>Drops the vertices of reduce task <paramref name="reduceTask"/>: it starts over on new trees.</summary>
    public void DropTask(int reduceTask)
    {
        foreach (var (key, adopted) in _vertices.Where(a => a.Key.R == reduceTask).ToList())
        {
            _vertices.Remove(key);
            job.Drop(adopted);
        }
    }
}

using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// A map task of a failed server, run again here: one leaf per (reduce task, stripe) that a parent asks for, each
/// sending its run from the parent's resume point.
/// </summary>
internal sealed class RerunMapTask(ServerJob job, Coordinate server, byte source)
{
    private readonly Dictionary<(int R, int Tree), Vertex> _leaves = [];

    public Coordinate Server { get; } = server;

    public byte Source { get; } = source;

    public MapOutput? Output { get; set; }

    /// <summary>Restart requests that came before the map output was ready.</summary>
    public Dictionary<(int R, int Tree), (ResumePoint Point, Coordinate Requester, byte Epoch)> Waiting { get; } = [];

    public IEnumerable<Vertex> Leaves => _leaves.Values;

    /// <summary>Takes out the leaves of one reduce task (it starts over on new trees).</summary>
    public List<Vertex> RemoveLeaves(int reduceTask)
    {
        var removed = _leaves.Where(l => l.Key.R == reduceTask).ToList();
        foreach (var (key, _) in removed)
        {
            _leaves.Remove(key);
        }
        foreach (var key in Waiting.Keys.Where(k => k.R == reduceTask).ToList())
        {
            Waiting.Remove(key);
        }
        return removed.Select(l => l.Value).ToList();
    }

    public Vertex? Leaf(int reduceTask, int tree, bool create = false)
    {
        if (_leaves.TryGetValue((reduceTask, tree), out var leaf) || !create || Output is null)
        {
            return leaf;
        }
        var run = new LocalRun(Output, reduceTask, tree);
        var output = new OutboundStream(job.JobId, reduceTask, tree, Server, job.Placement.VertexId(job.Self), Port.XPlus,
            job.Options.Shuffle.InitialWindowBytes, job.Options.Shuffle.MaxWindowBytes, job.Transport.Buffers, Source,
            ShuffleWire.FirstEpoch(job.GenerationOf(reduceTask)));
        output.Suspend();
        leaf = new Vertex(job, reduceTask, tree, Server, [], run.IsEmpty ? [] : [run], job.VertexMode, output);
        _leaves[(reduceTask, tree)] = leaf;
        job.Host(leaf);
        return leaf;
    }
}

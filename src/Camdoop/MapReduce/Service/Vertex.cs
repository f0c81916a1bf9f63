using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// An on-path vertex: reduce task r, tree t, on a non-root server (the Camdoop paper, §4.1). Its inputs are the streams of its
/// child vertices (one-hop neighbours whose parent in tree t is this server) and the local map tasks' stripe t of
/// partition r; its output is one stream to the parent vertex. It combines equal keys (Camdoop mode, associative
/// jobs) or only merges (no-agg mode, or a job that is not associative). A leaf with a single local run sends it
/// as is, straight from memory when it can.
/// </summary>
public sealed class Vertex : VertexBase
{
    private readonly bool _passThrough;

    public Vertex(ServerJob owner, int reduceTask, int tree, InboundStream[] children, LocalRun[] locals, MergeMode mode, OutboundStream output)
        : base(owner, reduceTask, children, locals, mode)
    {
        Tree = tree;
        Output = output;
        _passThrough = children.Length == 0 && locals.Length <= 1;
    }

    public int Tree { get; }

    public OutboundStream Output { get; }

    public override void Start()
    {
        if (_passThrough)
        {
            if (Locals.Count == 0)
            {
                Output.EndSource();
            }
            else if (Locals[0].InMemory)
            {
                Output.UseExternal(Locals[0].Memory);
                CountLocalBytes(Locals[0].Length);
            }
        }
        Owner.MarkDirty(this);
        Owner.Transport.MarkReady(Output);
    }

    public override void Pump()
    {
        if (IsFinished || Output.SourceDone)
        {
            return;
        }
        long before = Output.End;
        if (_passThrough)
        {
            StreamLocalRun();
        }
        else
        {
            Merge();
            UpdateWindows();
        }
        if (Output.End != before || Output.SourceDone)
        {
            Owner.Transport.MarkReady(Output);
        }
    }

    /// <summary>The parent acknowledged the FIN: nothing is left to do.</summary>
    internal void OnOutputComplete()
    {
        IsFinished = true;
    }

    private void Merge()
    {
        var merger = TryMerger();
        if (merger is null)
        {
            return; // some child has not sent anything yet: nothing can be emitted
        }
        FeedLocals();
        while (true)
        {
            var space = Output.DrainSpace();
            if (space.IsEmpty)
            {
                return;
            }
            var status = merger.Drain(space, out int written);
            Output.CommitDrained(written);
            if (status == DrainStatus.Completed)
            {
                Output.EndSource();
                ReleaseMerger();
                return;
            }
            if (status == DrainStatus.NeedsInput && !FeedLocals())
            {
                return;
            }
        }
    }

    /// <summary>A leaf whose run is on disk: copy it block by block into the send buffer.</summary>
    private void StreamLocalRun()
    {
        var run = Locals[0];
        while (!run.IsAtEnd)
        {
            var space = Output.DrainSpace();
            if (space.IsEmpty)
            {
                return;
            }
            int read = run.Read(space);
            Output.CommitDrained(read);
            CountLocalBytes(read);
        }
        Output.EndSource();
    }
}

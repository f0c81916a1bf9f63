using Camdoop.MapReduce.Merge;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// An interior vertex of an aggregation tree: a reducer whose output is a stream to its parent. It merges its
/// children's streams (and, on a server, its own local runs of the tree's stripes), combining equal keys when the job
/// is associative as the Camdoop vertices do, and writes into the stream's send buffer as the merge produces: what
/// waits here is only what the children sent faster than the parent takes.
/// </summary>
internal sealed class ForwardingVertex : StreamMergeNode, IStreamWriter
{
    private readonly Action _pump;
    private IOutboundByteStream? _stream;
    private bool _preambleSent;
    private bool _ended;
    private long _charged;

    public ForwardingVertex(DirectJob owner, int reduceTask, int tree, Coordinate parent, int streams, LocalRunMerge? local, int inputBytes, int blockBytes)
        : base(owner, reduceTask, streams, local, owner.Job.IsAssociativeCommutative ? MergeMode.Combine : MergeMode.Merge, inputBytes, blockBytes)
    {
        Tree = tree;
        Parent = parent;
        _pump = Pump;
    }

    public int Tree { get; }

    public Coordinate Parent { get; }

    /// <summary>Record-stream bytes written to the parent (the preamble not counted).</summary>
    public long BytesWritten { get; private set; }

    public bool IsDelivered { get; private set; }

    /// <summary>Sent again from the start after a failure, in place of an abandoned stream.</summary>
    public bool IsRestart { get; init; }

    /// <summary>Its stream is open (pushing, at the job's start; admitted, when its parent says so).</summary>
    public bool IsStarted => _stream is not null;

    public void Start(IStreamTransport transport)
    {
        _stream = transport.Open(Parent, this);
        Pump();
    }

    public void OnWritable(IOutboundByteStream stream) => Owner.Run(_pump);

    public void OnDelivered(IOutboundByteStream stream) => IsDelivered = true;

    /// <summary>Its stream is restarted by a new vertex: it sends nothing more.</summary>
    public override void Abandon()
    {
        _ended = true;
        base.Abandon();
    }

    public override void Pump()
    {
        var stream = _stream;
        if (stream is null || _ended)
        {
            return; // not opened yet: what came stays in the merger until Start
        }
        if (!_preambleSent)
        {
            var first = stream.WriteSpace();
            if (first.Length < StreamPreamble.Size)
            {
                return;
            }
            StreamPreamble.Write(first, Owner.JobId, ReduceTask, Tree);
            stream.Commit(StreamPreamble.Size);
            _preambleSent = true;
        }
        FeedLocal();
        while (true)
        {
            var space = stream.WriteSpace();
            if (space.IsEmpty)
            {
                return; // the send buffer is full: OnWritable comes back
            }
            var status = Merger.Drain(space, out int written);
            Owner.Declare(ComputeWork.Merge, Merger.ConsumedBytes, ref _charged);
            if (written > 0)
            {
                BytesWritten += written;
                stream.Commit(written);
            }
            if (status == DrainStatus.Completed)
            {
                Merger.ReleaseBuffers();
                _ended = true;
                stream.End();
                return;
            }
            if (status == DrainStatus.NeedsInput && !FeedLocal())
            {
                return;
            }
        }
    }
}

using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// This server's map output for one reduce task rooted elsewhere and one aggregation tree, when it is a leaf of that
/// tree: sent to its parent (the reducer's server, in the direct shuffle) over one stream: the preamble, then the
/// local runs of the tree's stripes merged into one sorted stream, written as the send buffer has room.
/// </summary>
internal sealed class DirectSender : IStreamWriter
{
    private readonly DirectJob _owner;
    private readonly LocalRunMerge _local;
    private readonly Action _pump;
    private IOutboundByteStream? _stream;
    private bool _preambleSent;
    private bool _ended;
    private long _charged;

    public DirectSender(DirectJob owner, int reduceTask, int tree, Coordinate parent, LocalRunMerge local)
    {
        _owner = owner;
        ReduceTask = reduceTask;
        Tree = tree;
        Parent = parent;
        _local = local;
        _pump = Pump;
    }

    public int ReduceTask { get; }

    public int Tree { get; }

    /// <summary>The server (or appliance) the stream goes to.</summary>
    public Coordinate Parent { get; }

    /// <summary>Record-stream bytes written (the preamble not counted).</summary>
    public long BytesWritten { get; private set; }

    public bool IsDelivered { get; private set; }

    /// <summary>Sent again from the start after a failure, in place of an abandoned stream.</summary>
    public bool IsRestart { get; init; }

    /// <summary>Its place among the job's streams here: when it was made (the server's rotation; resent ones last).</summary>
    public int Order { get; init; }

    /// <summary>Its parent said it may send (unused when pushing, or for a stream resent after a failure).</summary>
    public bool IsAdmitted { get; set; }

    /// <summary>Opened (it holds one of the job's concurrent stream slots until delivered).</summary>
    public bool IsStarted => _stream is not null;

    /// <summary>Replaced by a stream to another parent: it writes nothing more and its delivery no longer counts.</summary>
    public bool IsAbandoned { get; private set; }

    public void Abandon()
    {
        IsAbandoned = true;
        _ended = true;
    }

    public void Start(IStreamTransport transport)
    {
        _stream = transport.Open(Parent, this);
        Pump();
    }

    public void OnWritable(IOutboundByteStream stream) => _owner.Run(_pump);

    public void OnDelivered(IOutboundByteStream stream)
    {
        if (IsAbandoned)
        {
            return;
        }
        IsDelivered = true;
        _owner.OnSenderDelivered(this);
    }

    private void Pump()
    {
        var stream = _stream!;
        if (_ended)
        {
            return;
        }
        if (!_preambleSent)
        {
            var space = stream.WriteSpace();
            if (space.Length < StreamPreamble.Size)
            {
                return;
            }
            StreamPreamble.Write(space, _owner.JobId, ReduceTask, Tree);
            stream.Commit(StreamPreamble.Size);
            _preambleSent = true;
        }
        while (!_local.IsCompleted)
        {
            var space = stream.WriteSpace();
            if (space.IsEmpty)
            {
                return; // the send buffer is full: OnWritable comes back
            }
            int written = _local.Drain(space);
            // Merging the local runs into one stream is a vertex's kind of work (as at a root reducer).
            _owner.Declare(ComputeWork.Merge, _local.ConsumedBytes, ref _charged);
            BytesWritten += written;
            stream.Commit(written);
        }
        _ended = true;
        stream.End();
    }
}

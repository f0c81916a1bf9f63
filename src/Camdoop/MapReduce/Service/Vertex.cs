using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Records;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// An on-path vertex: reduce task r, tree t, on a non-root server (the Camdoop paper, §4.1). Its inputs are the streams
/// of its child vertices (one-hop neighbours whose parent in tree t is this server) and the local map tasks' stripe t of
/// partition r; its output is one stream to the parent vertex. It combines equal keys (Camdoop mode, associative
/// jobs) or only merges (no-agg mode, or a job that is not associative). A leaf with a single local run sends it
/// as is, straight from memory when it can; so does a map task re-run after a failure, as a leaf of its own.
/// <para>
/// When the parent is lost, the output waits (<see cref="OutboundStream.Suspend"/>); when the parent's new host asks
/// for the records after a key, the output starts again from the bytes it kept if they reach back that far, and
/// otherwise the vertex merges again from that key (<see cref="Restart"/>).
/// </para>
/// </summary>
public sealed class Vertex : VertexBase
{
    private readonly bool _passThrough;
    private DropFilter? _drop;

    public Vertex(ServerJob owner, int reduceTask, int tree, Coordinate home, InboundStream[] children, LocalRun[] locals, MergeMode mode, OutboundStream output)
        : base(owner, reduceTask, tree, home, children, locals, mode)
    {
        Tree = tree;
        Output = output;
        _passThrough = children.Length == 0 && locals.Length <= 1;
    }

    public int Tree { get; }

    public OutboundStream Output { get; }

    /// <summary>The server hosting the parent vertex the output goes to (-1: not known yet).</summary>
    internal int OutputHost { get; set; } = -1;

    // The last restart request answered (a retry of it is ignored).
    internal ResumePoint? LastResumePoint { get; set; }

    internal Coordinate LastResumeRequester { get; set; }

    internal byte LastResumeEpoch { get; set; }

    /// <summary>A leaf of one local run, sent as it is (no merger).</summary>
    public bool IsPassThrough => _passThrough;

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

    /// <summary>
    /// The parent's host asked for the records after <paramref name="point"/>, as epoch <paramref name="epoch"/>: from
    /// the bytes the output still holds when they reach back that far, otherwise merged (or read) again from there.
    /// Returns whether the vertex was finished before (its job counts it as running again).
    /// </summary>
    internal bool Restart(ResumePoint point, byte epoch)
    {
        bool wasFinished = IsFinished;
        IsFinished = false;
        var counters = Owner.Transport.Counters;
        var comparer = Owner.Job.KeyComparer;
        _drop = null;
        if (_passThrough && Locals.Count == 1 && Locals[0].InMemory && Output.End == 0 && !Output.SourceDone)
        {
            // The whole run is lent to the stream: it always reaches back.
            Output.UseExternal(Locals[0].Memory);
        }
        if (Output.TryRestartAt(point, comparer, epoch))
        {
            counters.RestartsFromKept++;
        }
        else if (_passThrough)
        {
            Output.Reset(epoch, point);
            if (Locals.Count == 0)
            {
                Output.EndSource();
            }
            else
            {
                Locals[0].SeekAfter(point, comparer);
            }
            counters.Regenerations++;
        }
        else
        {
            Output.Reset(epoch, point);
            RestartInputs(point);
            if (point.HasKey && point.Skip > 0)
            {
                _drop = new DropFilter(point);
            }
        }
        Owner.MarkDirty(this);
        Owner.Transport.MarkReady(Output);
        return wasFinished;
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
            DrainStatus status;
            int written;
            if (_drop is not null)
            {
                status = _drop.Drain(merger, space, Owner.Job.KeyComparer, out written);
                if (_drop.Done)
                {
                    _drop = null;
                }
            }
            else
            {
                status = merger.Drain(space, out written);
            }
            DeclareMergeWork();
            Output.CommitDrained(written);
            if (_drop is null)
            {
                Output.NoteRecordBoundary(Output.End + merger.PendingOutputBytes);
            }
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

    /// <summary>
    /// Drops the first records of a stream merged again from a key that the consumer already holds (the first
    /// <see cref="ResumePoint.Skip"/> records with that key), then passes everything on. The merger's output goes
    /// through a scratch buffer only until then.
    /// </summary>
    private sealed class DropFilter(ResumePoint point)
    {
        private byte[] _scratch = new byte[16 * 1024];
        private int _start;
        private int _end;
        private uint _skipped;
        private bool _dropping = true;
        private DrainStatus _mergerStatus = DrainStatus.NeedsInput;

        /// <summary>Everything held has been passed on and no more records are dropped.</summary>
        public bool Done => !_dropping && _start == _end;

        public DrainStatus Drain(StreamMerger merger, Span<byte> output, Jobs.IKeyComparer? comparer, out int written)
        {
            written = 0;
            while (_dropping)
            {
                Refill(merger);
                DropHeld(comparer);
                if (_dropping && _mergerStatus != DrainStatus.OutputFull)
                {
                    return _mergerStatus; // waiting for input (or everything was dropped)
                }
            }
            int count = Math.Min(output.Length, _end - _start);
            _scratch.AsSpan(_start, count).CopyTo(output);
            _start += count;
            written = count;
            return _start < _end ? DrainStatus.OutputFull : _mergerStatus;
        }

        private void Refill(StreamMerger merger)
        {
            if (_start > 0)
            {
                _scratch.AsSpan(_start, _end - _start).CopyTo(_scratch);
                _end -= _start;
                _start = 0;
            }
            if (_scratch.Length - _end < 4096)
            {
                Array.Resize(ref _scratch, _scratch.Length * 2);
            }
            _mergerStatus = merger.Drain(_scratch.AsSpan(_end), out int n);
            _end += n;
        }

        private void DropHeld(Jobs.IKeyComparer? comparer)
        {
            while (_dropping && _start < _end)
            {
                var held = _scratch.AsSpan(_start, _end - _start);
                var status = RecordCodec.TryParse(held, out var bounds);
                if (status != RecordParseStatus.Complete)
                {
                    if (status == RecordParseStatus.Malformed)
                    {
                        throw new InvalidDataException("a corrupt record stream from the merger");
                    }
                    return;
                }
                var key = held.Slice(bounds.KeyOffset, bounds.KeyLength);
                int order = comparer?.Compare(key, point.Key) ?? key.SequenceCompareTo(point.Key);
                if (order != 0 || (point.Skip != ResumePoint.SkipAll && _skipped >= point.Skip))
                {
                    _dropping = false;
                    return;
                }
                _skipped++;
                _start += bounds.Length;
            }
        }
    }
}

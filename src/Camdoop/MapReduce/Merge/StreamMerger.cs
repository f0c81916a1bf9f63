using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// Merges K sorted record streams (an on-path vertex: up to six children plus the local stripe) into one sorted
/// stream, incrementally. Feed each input with raw record-stream bytes in any chunking (<see cref="Append"/>),
/// mark it ended with <see cref="Finish"/>, and call <see cref="Drain"/> to emit into a bounded output span; Drain
/// stops when the output is full or when emitting more would be unsafe, and resumes on the next call.
/// <para>
/// Safety rule: a record is emitted only when every unfinished input has a complete record buffered, so nothing
/// smaller can still arrive. In <see cref="MergeMode.Combine"/> and <see cref="MergeMode.Reduce"/>, all records of
/// the minimum key are grouped; when an input runs dry in the middle of a key the partial group is held until that
/// input delivers a larger key or ends. Only whole keys are emitted. Output order is (key, value) ascending, ties
/// by input index. The output is a byte stream too: a record may be split across two Drain calls.
/// </para>
/// <para>
/// Single-threaded. Steady state allocates nothing: per-input buffers grow to the largest window and then wrap
/// around to the room consumed records left (or are compacted in place); heads carry an 8-byte key prefix so most
/// comparisons are one integer compare. Corrupt input (bad lengths, a stream ending mid-record) throws <see cref="InvalidDataException"/>; exceptions from job code
/// propagate. After an exception the merger must be <see cref="Reset"/> before reuse.
/// </para>
/// </summary>
public sealed partial class StreamMerger
{
    /// <summary>Readable bytes an array must have past a record stream lent with <see cref="TryLend"/>.</summary>
    public const int LendSlackBytes = MergeInput.Slack;

    private readonly IMapReduceJob _job;
    private readonly InputBufferSupply _buffers;
    private readonly IKeyComparer? _comparer;
    private readonly MergeMode _mode;
    private readonly bool _collect; // Reduce of a non-associative job: gather every value of a key
    private readonly bool _tieBreakByValue;
    private readonly MergeInput[] _inputs;
    private readonly HeadPrefixes _heads;
    private LiveInputs _live;
    private readonly int[] _prefixHolders; // scratch for HeadPrefixes.CollectEqual (empty without a tournament)
    private readonly long[] _foldOrder; // scratch for FoldGroup: (place among the live inputs, input)
    private KeyGroup _group;
    private readonly PendingOutput _pending = new();
    private readonly PendingEmitter _emitter;
    private EmittedKey _lastEmitted = new();

    public StreamMerger(IMapReduceJob job, int inputCount, MergeMode mode, int initialInputCapacity = 16 * 1024, ShuffleBufferPool? bufferPool = null)
        : this(job, inputCount, mode, tournament: null, initialInputCapacity, bufferPool)
    {
    }

    /// <param name="job">The job whose records are merged.</param>
    /// <param name="inputCount">How many inputs.</param>
    /// <param name="mode">Merge, combine or reduce.</param>
    /// <param name="tournament">
    /// Whether the heads are selected by a <see cref="PrefixTournament"/> rather than scanned; null: by the input count
    /// (<see cref="HeadPrefixes.TournamentInputs"/>). Tests and benchmarks force either.
    /// </param>
    /// <param name="initialInputCapacity">Each input's first buffer.</param>
    /// <param name="bufferPool">Where input buffers come from, if anywhere.</param>
    internal StreamMerger(IMapReduceJob job, int inputCount, MergeMode mode, bool? tournament, int initialInputCapacity = 16 * 1024,
        ShuffleBufferPool? bufferPool = null)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentOutOfRangeException.ThrowIfLessThan(inputCount, 1);
        if (mode == MergeMode.Combine && !job.IsAssociativeCommutative)
        {
            throw new ArgumentException($"job '{job.Name}' is not associative and commutative; it can only be merged", nameof(mode));
        }
        _job = job;
        _buffers = new InputBufferSupply(bufferPool);
        _comparer = job.KeyComparer;
        _mode = mode;
        _collect = mode == MergeMode.Reduce && !job.IsAssociativeCommutative;
        _tieBreakByValue = mode == MergeMode.Merge || _collect;
        _inputs = new MergeInput[inputCount];
        _heads = new HeadPrefixes(inputCount, tournament);
        _live = new LiveInputs(inputCount);
        int capacity = Math.Max(64, initialInputCapacity);
        for (int i = 0; i < inputCount; i++)
        {
            _inputs[i] = new MergeInput(i, _buffers.RentFirst(capacity + MergeInput.Slack), _comparer is null);
        }
        _prefixHolders = _heads.HasTournament ? new int[_heads.Length] : [];
        _foldOrder = _heads.HasTournament ? new long[_heads.Length] : [];
        _group = new KeyGroup(job, _collect);
        _emitter = new PendingEmitter(this);
        Reset();
    }

    public IMapReduceJob Job => _job;

    public MergeMode Mode => _mode;

    public int InputCount => _inputs.Length;

    /// <summary>Whether the heads are selected by a <see cref="PrefixTournament"/> (many inputs) rather than scanned.</summary>
    internal bool UsesTournament => _heads.HasTournament;

    /// <summary>Bytes appended over all inputs since the last reset.</summary>
    public long InputBytes { get; private set; }

    /// <summary>
    /// Bytes of input the merge has read since the last reset: taken in, less what still waits in the inputs and what
    /// <see cref="ResetInput"/> discarded. Summed over the inputs on each call (a few per drain), not kept per record.
    /// </summary>
    public long ConsumedBytes
    {
        get
        {
            long waiting = 0;
            foreach (ref readonly var s in _inputs.AsSpan())
            {
                waiting += s.LiveBytes;
            }
            return InputBytes - _discardedBytes - waiting;
        }
    }

    private long _discardedBytes;

    /// <summary>Records consumed from all inputs.</summary>
    public long InputRecords
    {
        get
        {
            long total = 0;
            foreach (ref readonly var s in _inputs.AsSpan())
            {
                total += s.ConsumedRecords;
            }
            return total;
        }
    }

    /// <summary>Bytes moved inside or between input buffers to make room (compaction, growth, ending a long wrap), since the merger was made.</summary>
    internal long MovedBytes => _buffers.MovedBytes;

    /// <summary>Times an input wrapped around its buffer instead of moving its bytes, since the merger was made.</summary>
    internal long Wraps => _buffers.Wraps;

    /// <summary>Wraps whose cut record was too long to join in place, joined at the end of a Drain.</summary>
    internal long DeferredUnwraps => _buffers.DeferredUnwraps;

    /// <summary>Bytes handed out by <see cref="Drain"/>.</summary>
    public long OutputBytes { get; private set; }

    /// <summary>Records emitted (for Reduce: records produced by the reduce function).</summary>
    public long OutputRecords { get; private set; }

    /// <summary>Every input finished and every byte emitted.</summary>
    public bool IsCompleted => _live.Count == 0 && !_group.IsOpen && _pending.IsEmpty;

    /// <summary>Bytes buffered for <paramref name="input"/> and not yet consumed (for flow-control windows).</summary>
    public int BufferedBytes(int input) => _inputs[input].LiveBytes;

    /// <summary>
    /// True when <paramref name="input"/> is unfinished and holds no complete record: the merger cannot emit until
    /// it receives more bytes or is finished.
    /// </summary>
    public bool NeedsData(int input)
    {
        ref var s = ref _inputs[input];
        return !s.Finished && !s.HasHead;
    }

    public bool IsFinished(int input) => _inputs[input].Finished;

    /// <summary>Number of unfinished inputs without a complete record.</summary>
    public int WaitingInputs => _live.Waiting;

    /// <summary>
    /// Makes input <paramref name="input"/>'s buffer hold at least <paramref name="capacity"/> bytes now, so that a
    /// stream whose receive window is known does not grow its buffer step by step: every outgrown step is garbage
    /// that was touched (on 8x8x8 R = 1, 1.6 GB of allocations for 0.65 GB of final buffers, 0.3 GB more peak memory).
    /// </summary>
    public void Reserve(int input, int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        ref var s = ref _inputs[input];
        if (!s.CanGrowFor(capacity))
        {
            return;
        }
        SaveKeys(); // keys noted by position move with the bytes
        s.Grow(capacity, _buffers);
    }

    /// <summary>Copies <paramref name="bytes"/> (any part of the input's record stream) into the input's buffer.</summary>
    public void Append(int input, ReadOnlySpan<byte> bytes)
    {
        if (bytes.IsEmpty)
        {
            _inputs[input].ThrowIfFinished();
            return;
        }
        bytes.CopyTo(AppendSpace(input, bytes.Length));
        CommitAppend(input, bytes.Length);
    }

    /// <summary>
    /// Room for the next <paramref name="count"/> bytes of the input's record stream, to fill in place and then
    /// <see cref="CommitAppend"/> (a local run read from its file straight into the merger, with no copy between).
    /// </summary>
    public Span<byte> AppendSpace(int input, int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        return _inputs[input].AppendSpace(count, _buffers);
    }

    /// <summary>Appends the first <paramref name="count"/> bytes written into the last <see cref="AppendSpace"/>.</summary>
    public void CommitAppend(int input, int count)
    {
        ref var s = ref _inputs[input];
        s.Commit(count);
        if (count == 0)
        {
            return;
        }
        InputBytes += count;
        FindHead(ref s, input);
    }

    /// <summary>
    /// Hands <paramref name="input"/> its whole record stream in place, with no copy, and finishes the input: a local
    /// map output kept in memory, which the merger then reads where it lies (on 8x8x8 R = 1 the local runs are 1.2 GB,
    /// which were copied block by block into the merger's buffers). The stream's array must stay unchanged until the
    /// merger is reset and must have <see cref="LendSlackBytes"/> readable bytes past the stream (read, never written).
    /// Returns false, taking nothing, when the input already holds bytes, is finished, or the array has no such slack
    /// (then Append it).
    /// </summary>
    public bool TryLend(int input, ReadOnlyMemory<byte> stream)
    {
        ref var s = ref _inputs[input];
        if (!s.CanTakeStream
            || !System.Runtime.InteropServices.MemoryMarshal.TryGetArray(stream, out var segment)
            || segment.Array is null || (long)segment.Offset + segment.Count + LendSlackBytes > segment.Array.Length)
        {
            return false;
        }
        if (segment.Count > 0)
        {
            s.Lend(segment.Array, segment.Offset, segment.Count);
            InputBytes += segment.Count;
            FindHead(ref s, input);
        }
        Finish(input);
        return true;
    }

    /// <summary>
    /// Takes <paramref name="buffer"/>, a buffer of this merger's pool whose first <paramref name="length"/> bytes begin
    /// <paramref name="input"/>'s record stream, as the input's own buffer, with no copy; the input's previous buffer
    /// goes back to the pool, and <paramref name="buffer"/> goes there when the input outgrows it or is trimmed. For a
    /// vertex's child whose bytes waited in a stash until the vertex had a merger: on 8x8x8 R = 512 S = 1, 3.2 GB of
    /// stashes were copied into merger inputs. Returns false, taking nothing, when the merger has no pool, the input
    /// holds bytes, is lent or finished, or the buffer has no <see cref="LendSlackBytes"/> past the bytes (then Append).
    /// </summary>
    public bool TryAdopt(int input, byte[] buffer, int length)
    {
        ArgumentNullException.ThrowIfNull(buffer);
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        ref var s = ref _inputs[input];
        if (!_buffers.HasPool || length == 0 || !s.CanTakeStream || (long)length + LendSlackBytes > buffer.Length)
        {
            return false;
        }
        SaveKeys(); // keys noted by position leave with the old buffer
        s.Adopt(buffer, length, _buffers);
        InputBytes += length;
        FindHead(ref s, input);
        return true;
    }

    /// <summary>Marks the end of <paramref name="input"/>. Throws when it ends in the middle of a record.</summary>
    public void Finish(int input)
    {
        ref var s = ref _inputs[input];
        if (s.Finished)
        {
            return;
        }
        s.Finish();
        if (!s.HasHead && s.IsWrapped && TryParseHead(ref s, input))
        {
            _live.HeadFound(); // the record cut by a wrap was whole after all
            return;
        }
        if (!s.HasHead)
        {
            if (s.HasBytesLeft)
            {
                throw s.Truncated();
            }
            _heads.Clear(input);
            _live.Leave(input, waiting: true);
        }
    }

    /// <summary>
    /// Discards what is buffered for <paramref name="input"/> and makes it unfinished again, so it can be re-fed
    /// from a new source (failure recovery: the replacement child resends the records after
    /// <see cref="LastConsumedKey"/>). Values of that input already folded into a held key stay folded.
    /// </summary>
    public void ResetInput(int input)
    {
        ref var s = ref _inputs[input];
        bool hadHead = s.HasHead;
        _discardedBytes += s.LiveBytes;
        s.DiscardBytes();
        _heads.Clear(input);
        if (!_live.Contains(input))
        {
            _live.Join(input);
        }
        else if (hadHead)
        {
            _live.HeadLost();
        }
    }

    /// <summary>
    /// Gives input buffers that grew past what <paramref name="capacity"/> (plus slack) takes back to the buffer pool
    /// for smaller ones, so that an idle merger kept for reuse does not hold what one busy vertex grew (R = N:
    /// hundreds of thousands of mergers on 8x8x8). Only for an empty merger (after <see cref="Reset"/>); without a
    /// pool it does nothing.
    /// </summary>
    public void TrimBuffers(int capacity)
    {
        if (!_buffers.HasPool)
        {
            return;
        }
        int size = ShuffleBufferPool.SizeFor(Math.Max(64, capacity) + MergeInput.Slack);
        for (int i = 0; i < _inputs.Length; i++)
        {
            _inputs[i].Trim(size, _buffers);
        }
    }

    /// <summary>
    /// Gives every input buffer back to the buffer pool for good: the merger is dropped with its job (a killed or
    /// ended job's pooled mergers would otherwise keep their buffers rented). The merger must not be used afterwards.
    /// </summary>
    public void ReleaseBuffers()
    {
        if (!_buffers.HasPool)
        {
            return;
        }
        for (int i = 0; i < _inputs.Length; i++)
        {
            _inputs[i].ReleaseBuffer(_buffers);
        }
    }

    /// <summary>Returns to the initial state (all inputs empty and unfinished), keeping the buffers.</summary>
    public void Reset()
    {
        for (int i = 0; i < _inputs.Length; i++)
        {
            _inputs[i].Reset();
            _heads.Clear(i);
        }
        _live.Reset();
        _buffers.Draining = false;
        _buffers.UnwrapDeferred = false;
        _group.Close();
        _pending.Clear();
        _lastEmitted.Clear();
        InputBytes = 0;
        _discardedBytes = 0;
        OutputBytes = 0;
        OutputRecords = 0;
    }

    /// <summary>
    /// Emits merged records into <paramref name="output"/>; <paramref name="written"/> bytes were written. See
    /// <see cref="DrainStatus"/> for why it stopped. Bytes of <paramref name="output"/> past
    /// <paramref name="written"/> may have been used as scratch (short records are copied as 32-byte blocks).
    /// </summary>
    public DrainStatus Drain(Span<byte> output, out int written)
    {
        int position = _pending.Flush(output);
        DrainStatus status;
        while (true)
        {
            _buffers.Draining = true;
            status = !_pending.IsEmpty
                ? DrainStatus.OutputFull
                : _mode == MergeMode.Merge ? DrainMerge(output, ref position) : DrainGrouped(output, ref position);
            _buffers.Draining = false;
            SaveKeys();
            // A record cut by a wrap and too long to join up in place: joined now, and the merge goes on.
            if (!_buffers.UnwrapDeferred || !UnwrapDeferred() || status == DrainStatus.OutputFull)
            {
                break;
            }
        }
        written = position;
        OutputBytes += position;
        return status;
    }
}

using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// One local map task's run of (reduce task, stripe): the leaf child of the vertex on the same server (the Camdoop paper, §4.1:
/// map outputs are read from local disk, never from the network). Hands its bytes over in memory, block by block:
/// straight from an in-memory map output, or read from the task's indexed run file into the merger's buffer. The
/// file's reader exists only while the run is being read: with R = N a server holds thousands of runs.
/// </summary>
public sealed class LocalRun
{
    private readonly MapOutput _output;
    private readonly int _reduceTask;
    private readonly int _stripe;
    private ReadOnlyMemory<byte> _memory;
    private bool _inMemory;
    private RunSegmentReader? _reader;
    private long _position;

    public LocalRun(MapOutput output, int reduceTask, int stripe)
    {
        ArgumentNullException.ThrowIfNull(output);
        Output = output;
        _output = output;
        _reduceTask = reduceTask;
        _stripe = stripe;
        Length = output.Header(reduceTask, stripe).PayloadBytes;
        _inMemory = output.InMemory;
        if (_inMemory)
        {
            _memory = output.Payload(reduceTask, stripe);
        }
    }

    /// <summary>The map output the run belongs to.</summary>
    public MapOutput Output { get; }

    public long Length { get; }

    public int ReduceTask => _reduceTask;

    public int Stripe => _stripe;

    public bool IsEmpty => Length == 0;

    public bool InMemory => _inMemory;

    /// <summary>The whole run, for a leaf that sends it as is (in-memory runs only).</summary>
    public ReadOnlyMemory<byte> Memory => _memory;

    public bool IsAtEnd => _position == Length;

    /// <summary>Bytes handed over so far.</summary>
    public long Position => _position;

    /// <summary>Appends the next block to merger input <paramref name="input"/>, or finishes it at the end. Returns bytes fed.</summary>
    public int Feed(StreamMerger merger, int input, int blockBytes)
    {
        if (IsAtEnd)
        {
            merger.Finish(input);
            Release();
            return 0;
        }
        int count = (int)Math.Min(blockBytes, Length - _position);
        if (_inMemory)
        {
            merger.Append(input, _memory.Span.Slice((int)_position, count));
        }
        else
        {
            count = Reader.Read(merger.AppendSpace(input, count));
            merger.CommitAppend(input, count);
        }
        _position += count;
        return count;
    }

    /// <summary>
    /// Lends the whole in-memory run to merger input <paramref name="input"/>, which reads it in place and is then
    /// finished (<see cref="StreamMerger.TryLend"/>). False when the run is on disk, partly fed already, or the merger
    /// cannot take it: feed it block by block then.
    /// </summary>
    public bool TryLendTo(StreamMerger merger, int input)
    {
        if (!_inMemory || _position != 0 || !merger.TryLend(input, _memory))
        {
            return false;
        }
        _position = Length;
        return true;
    }

    /// <summary>Copies the next bytes into <paramref name="destination"/> (a leaf streaming a run from disk). Returns bytes copied.</summary>
    public int Read(Span<byte> destination)
    {
        int count = (int)Math.Min(destination.Length, Length - _position);
        if (count == 0)
        {
            return 0;
        }
        if (_inMemory)
        {
            _memory.Span.Slice((int)_position, count).CopyTo(destination);
        }
        else
        {
            count = Reader.Read(destination[..count]);
        }
        _position += count;
        if (IsAtEnd)
        {
            Release();
        }
        return count;
    }

    /// <summary>
    /// Moves to the first record after <paramref name="point"/> (failure recovery: the run is handed over again from
    /// there). A run on disk is read into memory first: this happens only after a failure, once per run.
    /// </summary>
    public void SeekAfter(ResumePoint point, IKeyComparer? comparer)
    {
        ArgumentNullException.ThrowIfNull(point);
        Release();
        if (!_inMemory)
        {
            var bytes = new byte[Length + Merge.StreamMerger.LendSlackBytes];
            using (var reader = _output.OpenRun(_reduceTask, _stripe))
            {
                int read = 0;
                while (read < Length)
                {
                    int n = reader.Read(bytes.AsSpan(read, (int)(Length - read)));
                    if (n == 0)
                    {
                        throw new InvalidDataException($"the run of reduce task {_reduceTask}, stripe {_stripe} ended early");
                    }
                    read += n;
                }
            }
            _memory = bytes.AsMemory(0, (int)Length);
            _inMemory = true;
        }
        uint skipped = 0;
        int found = point.FindFirstAfter(_memory.Span, comparer, ref skipped, out int consumed);
        _position = found >= 0 ? found : consumed;
    }

    /// <summary>Stops reading the run (its vertex was dropped).</summary>
    public void Close() => Release();

    private RunSegmentReader Reader => _reader ??= _output.OpenRun(_reduceTask, _stripe);

    private void Release()
    {
        _reader?.Dispose();
        _reader = null;
    }
}

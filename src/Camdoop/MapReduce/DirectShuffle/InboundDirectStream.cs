using System.Buffers;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A stream another host opened to this one: its preamble names the job, reduce task and tree, and the rest goes to
/// an input of that reducer or interior vertex. A stream for no job, reduce task or tree here, or a second one from
/// the same sender and tree, is read and dropped, and counted. A stream for a job that has not started here yet is held (copied,
/// up to the service's limit) until it does: the start reaches servers at different times. A stream whose preamble
/// is an admission carries nothing else: it tells this host that one of its own streams may send.
/// </summary>
internal sealed class InboundDirectStream : IStreamReader
{
    private readonly DirectShuffleService _service;
    private readonly int _sender;
    private readonly byte[] _preamble = new byte[StreamPreamble.Size];
    private int _preambleBytes;
    private DirectJob? _job;
    private StreamMergeNode? _target;
    private int _input = -1;
    private int _tree;
    private long _bytes;
    private bool _admission;
    private bool _dropped;
    private bool _early;
    private bool _endedEarly;
    private byte[]? _held;

    /// <summary>The job the preamble names (0 before it is read).</summary>
    public ulong JobId { get; private set; }

    /// <summary>Bytes kept while the job has not started here.</summary>
    public int HeldBytes { get; private set; }

    public InboundDirectStream(DirectShuffleService service, int sender)
    {
        _service = service;
        _sender = sender;
    }

    public void OnData(ReadOnlySpan<byte> data)
    {
        _bytes += data.Length;
        if (_preambleBytes < StreamPreamble.Size)
        {
            int n = Math.Min(data.Length, StreamPreamble.Size - _preambleBytes);
            data[..n].CopyTo(_preamble.AsSpan(_preambleBytes));
            _preambleBytes += n;
            data = data[n..];
            if (_preambleBytes < StreamPreamble.Size)
            {
                return;
            }
            Bind();
        }
        if (_early)
        {
            Hold(data);
            return;
        }
        if (_admission || _dropped || data.IsEmpty || _job!.Failure is not null)
        {
            return;
        }
        try
        {
            _target!.OnData(_input, data);
            _target.Admission?.OnReceived(_sender, _tree, _bytes);
        }
        // corrupt data or a job function's bug fails the job on this server, never the server
        catch (Exception e)
        {
            _job.Fail($"{e.GetType().Name}: {e.Message}");
        }
    }

    public void OnEnd()
    {
        if (_preambleBytes < StreamPreamble.Size)
        {
            _service.StreamsDropped++;
            return;
        }
        if (_early)
        {
            _endedEarly = true;
            return;
        }
        if (_admission || _dropped || _job!.Failure is not null)
        {
            return;
        }
        try
        {
            _target!.OnEnd(_input);
            // Its end frees its admission slot for the next child.
            _target.Admission?.OnEnded(_sender, _tree, _bytes);
        }
        catch (Exception e)
        {
            _job.Fail($"{e.GetType().Name}: {e.Message}");
        }
    }

    /// <summary>The job has started here: bind, hand over what was held, and the end if it came.</summary>
    public void Resume()
    {
        _early = false;
        Bind();
        var held = _held;
        int length = HeldBytes;
        _held = null;
        HeldBytes = 0;
        if (held is not null)
        {
            _bytes -= length; // counted as they came
            OnData(held.AsSpan(0, length));
            ArrayPool<byte>.Shared.Return(held);
        }
        if (_endedEarly)
        {
            OnEnd();
        }
    }

    /// <summary>Its job ended before it started here: drop what was held.</summary>
    public void Drop()
    {
        _early = false;
        _dropped = true;
        _service.StreamsDropped++;
        if (_held is not null)
        {
            ArrayPool<byte>.Shared.Return(_held);
            _held = null;
        }
        HeldBytes = 0;
    }

    private void Hold(ReadOnlySpan<byte> data)
    {
        if (data.IsEmpty)
        {
            return;
        }
        if (!_service.GrowEarly(this, data.Length))
        {
            Drop();
            _service.NoteEarlyOverflow(JobId, _sender);
            return;
        }
        if (_held is null || _held.Length < HeldBytes + data.Length)
        {
            var bigger = ArrayPool<byte>.Shared.Rent(Math.Max(64 * 1024, 2 * (HeldBytes + data.Length)));
            _held?.AsSpan(0, HeldBytes).CopyTo(bigger);
            if (_held is not null)
            {
                ArrayPool<byte>.Shared.Return(_held);
            }
            _held = bigger;
        }
        data.CopyTo(_held.AsSpan(HeldBytes));
        HeldBytes += data.Length;
    }

    private void Bind()
    {
        var (jobId, reduceTask, tree) = StreamPreamble.Read(_preamble);
        JobId = jobId;
        if (StreamPreamble.IsAdmission(tree, out int admitted))
        {
            _admission = true;
            _service.OnAdmitted(jobId, reduceTask, admitted);
            return;
        }
        _tree = tree;
        _job = _service.GetJob(jobId);
        if (_job is null)
        {
            if (_service.TryHoldEarly(this))
            {
                _early = true;
                return;
            }
            _service.NoteEarlyOverflow(jobId, _sender);
        }
        _target = _job?.MergeFor(reduceTask, tree);
        _input = _target?.Attach(_sender, tree) ?? -1;
        if (_input < 0)
        {
            _dropped = true;
            _service.StreamsDropped++;
        }
    }
}

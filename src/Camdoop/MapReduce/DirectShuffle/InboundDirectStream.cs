using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A stream another server opened to this one: its preamble names the job and reduce task, and the rest goes to
/// that reducer's input for the sender. A stream for no job or reduce task here, or a second one from the same
/// server, is read and dropped, and counted.
/// </summary>
internal sealed class InboundDirectStream : IStreamReader
{
    private readonly DirectShuffleService _service;
    private readonly int _sender;
    private readonly byte[] _preamble = new byte[StreamPreamble.Size];
    private int _preambleBytes;
    private DirectJob? _job;
    private DirectReducer? _reducer;
    private bool _dropped;

    public InboundDirectStream(DirectShuffleService service, int sender)
    {
        _service = service;
        _sender = sender;
    }

    public void OnData(ReadOnlySpan<byte> data)
    {
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
        if (_dropped || data.IsEmpty || _job!.Failure is not null)
        {
            return;
        }
        try
        {
            _reducer!.OnData(_sender, data);
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
        if (_dropped || _job!.Failure is not null)
        {
            return;
        }
        try
        {
            _reducer!.OnEnd(_sender);
        }
        catch (Exception e)
        {
            _job.Fail($"{e.GetType().Name}: {e.Message}");
        }
    }

    private void Bind()
    {
        var (jobId, reduceTask) = StreamPreamble.Read(_preamble);
        _job = _service.GetJob(jobId);
        _reducer = _job?.Reducer(reduceTask);
        if (_reducer is null || !_reducer.Attach(_sender))
        {
            _dropped = true;
            _service.StreamsDropped++;
        }
    }
}

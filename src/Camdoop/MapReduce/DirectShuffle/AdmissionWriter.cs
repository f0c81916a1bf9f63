using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// Tells a child that its stream may send: a stream of one preamble (<see cref="StreamPreamble.WriteAdmission"/>).
/// A stream of its own rather than a message on another channel, so that it needs nothing of the transport but what
/// the data streams do, in the simulator and over kernel sockets alike.
/// </summary>
internal sealed class AdmissionWriter(ulong jobId, int reduceTask, int tree) : IStreamWriter
{
    private bool _written;

    public void Send(IStreamTransport transport, Runtime.Topology.Coordinate child) => Write(transport.Open(child, this));

    public void OnWritable(IOutboundByteStream stream) => Write(stream);

    public void OnDelivered(IOutboundByteStream stream)
    {
    }

    private void Write(IOutboundByteStream stream)
    {
        if (_written)
        {
            return;
        }
        var space = stream.WriteSpace();
        if (space.Length < StreamPreamble.Size)
        {
            return; // OnWritable comes back
        }
        StreamPreamble.WriteAdmission(space, jobId, reduceTask, tree);
        stream.Commit(StreamPreamble.Size);
        stream.End();
        _written = true;
    }
}

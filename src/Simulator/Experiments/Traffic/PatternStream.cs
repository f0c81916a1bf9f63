using Camdoop.Runtime.Transport.Tcp;

namespace Camdoop.Experiments.Traffic;

/// <summary>
/// A stream of <see cref="Length"/> bytes whose value at every offset is a function of the flow and the offset, so
/// the receiving end can check each byte it is handed without either end storing the stream.
/// </summary>
public sealed class PatternSource(int flow, long length) : ITcpStreamSource
{
    public long Length { get; } = length;

    public long Available => Length;

    public bool IsComplete => true;

    public void Read(long offset, Span<byte> destination)
    {
        for (int i = 0; i < destination.Length; i++)
        {
            destination[i] = PatternSink.ByteAt(flow, offset + i);
        }
    }

    public void Acknowledged(long offset)
    {
    }
}

/// <summary>Counts and checks the bytes of a <see cref="PatternSource"/> as they arrive, in order.</summary>
public sealed class PatternSink(int flow, Action<int> ended) : ITcpStreamSink
{
    public long Received { get; private set; }

    /// <summary>Bytes that differed from the pattern (any at all is a transport bug).</summary>
    public long Corrupt { get; private set; }

    public bool Ended { get; private set; }

    public static byte ByteAt(int flow, long offset) => (byte)((offset * 131) + (offset >> 8) + (flow * 7));

    public void OnData(ReadOnlySpan<byte> data)
    {
        for (int i = 0; i < data.Length; i++)
        {
            if (data[i] != ByteAt(flow, Received + i))
            {
                Corrupt++;
            }
        }
        Received += data.Length;
    }

    public void OnEnd()
    {
        Ended = true;
        ended(flow);
    }
}

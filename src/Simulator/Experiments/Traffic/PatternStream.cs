using Camdoop.Runtime.Transport.Tcp;

namespace Camdoop.Experiments.Traffic;

/// <summary>
/// A stream of <see cref="Length"/> bytes whose value at every offset is a function of the flow and the offset, so
/// the receiving end can check each byte it is handed without either end storing the stream. Unchecked, the bytes
/// are left as the frame buffer had them (measuring the simulator rather than the pattern's loops).
/// </summary>
public sealed class PatternSource(int flow, long length, bool check = true) : ITcpStreamSource
{
    public long Length { get; } = length;

    public long Available => Length;

    public bool IsComplete => true;

    public void Read(long offset, Span<byte> destination)
    {
        if (!check)
        {
            return;
        }
        for (int i = 0; i < destination.Length; i++)
        {
            destination[i] = PatternSink.ByteAt(flow, offset + i);
        }
    }

    public void Acknowledged(long offset)
    {
    }
}

/// <summary>Counts and (unless told not to) checks the bytes of a <see cref="PatternSource"/> as they arrive, in order.</summary>
public sealed class PatternSink(int flow, Action<int> ended, bool check = true) : ITcpStreamSink
{
    public long Received { get; private set; }

    /// <summary>Bytes that differed from the pattern (any at all is a transport bug).</summary>
    public long Corrupt { get; private set; }

    public bool Ended { get; private set; }

    public static byte ByteAt(int flow, long offset) => (byte)((offset * 131) + (offset >> 8) + (flow * 7));

    public void OnData(ReadOnlySpan<byte> data)
    {
        if (!check)
        {
            Received += data.Length;
            return;
        }
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

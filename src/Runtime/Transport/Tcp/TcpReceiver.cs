using System.Buffers;

namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>
/// The receiving half of a connection: hands bytes to the sink in order, each once, keeps segments that arrive
/// ahead of a hole (copies in pooled buffers, up to a limit; only loss or reordering gets there), and says what to
/// acknowledge. Sequence numbers as in <see cref="TcpSender"/>: the stream's end takes one.
/// </summary>
public sealed class TcpReceiver
{
    private readonly ITcpStreamSink _sink;
    private readonly int _reorderLimit;
    private readonly SortedList<long, Held> _ahead = [];
    private int _heldBytes;

    public TcpReceiver(ITcpStreamSink sink, int reorderLimit)
    {
        _sink = sink;
        _reorderLimit = reorderLimit;
    }

    /// <summary>Next sequence number expected: what every acknowledgement carries.</summary>
    public long Expected { get; private set; }

    public bool Ended { get; private set; }

    public long BytesDelivered { get; private set; }

    /// <summary>Segments that repeated bytes already received.</summary>
    public long Duplicates { get; private set; }

    /// <summary>Segments ahead of a hole dropped because the reorder buffer was full.</summary>
    public long Overflows { get; private set; }

    /// <summary>Takes a segment in; returns the acknowledgement number to send back.</summary>
    public long OnSegment(long sequence, ReadOnlySpan<byte> payload, bool fin)
    {
        long end = sequence + payload.Length + (fin ? 1 : 0);
        if (Ended || end <= Expected)
        {
            Duplicates++;
            return Expected;
        }
        if (sequence > Expected)
        {
            Hold(sequence, payload, fin);
            return Expected;
        }
        Accept(sequence, payload, fin);
        while (_ahead.Count > 0 && !Ended)
        {
            long first = _ahead.Keys[0];
            if (first > Expected)
            {
                break;
            }
            var held = _ahead.Values[0];
            _ahead.RemoveAt(0);
            _heldBytes -= held.Length;
            if (first + held.Length + (held.Fin ? 1 : 0) > Expected)
            {
                Accept(first, held.Buffer.AsSpan(0, held.Length), held.Fin);
            }
            ArrayPool<byte>.Shared.Return(held.Buffer);
        }
        return Expected;
    }

    /// <summary>Returns held buffers to the pool (the connection is gone).</summary>
    public void Clear()
    {
        foreach (var held in _ahead.Values)
        {
            ArrayPool<byte>.Shared.Return(held.Buffer);
        }
        _ahead.Clear();
        _heldBytes = 0;
    }

    /// <summary>Delivers the part of a segment starting at or before <see cref="Expected"/> that is new.</summary>
    private void Accept(long sequence, ReadOnlySpan<byte> payload, bool fin)
    {
        int skip = (int)Math.Min(payload.Length, Expected - sequence);
        var fresh = payload[skip..];
        if (fresh.Length > 0)
        {
            _sink.OnData(fresh);
            BytesDelivered += fresh.Length;
        }
        Expected = sequence + payload.Length;
        if (fin)
        {
            Expected++;
            Ended = true;
            Clear();
            _sink.OnEnd();
        }
    }

    private void Hold(long sequence, ReadOnlySpan<byte> payload, bool fin)
    {
        if (_ahead.ContainsKey(sequence))
        {
            Duplicates++;
            return;
        }
        if (_heldBytes + payload.Length > _reorderLimit)
        {
            Overflows++;
            return;
        }
        var buffer = ArrayPool<byte>.Shared.Rent(Math.Max(1, payload.Length));
        payload.CopyTo(buffer);
        _ahead.Add(sequence, new Held(buffer, payload.Length, fin));
        _heldBytes += payload.Length;
    }

    private readonly record struct Held(byte[] Buffer, int Length, bool Fin);
}

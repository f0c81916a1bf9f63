using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Node;

/// <summary>
/// A bounded FIFO ring of frames. A deep bound (a relay's queue, as deep as a switch port's) is not allocated up
/// front: the ring starts at <see cref="InitialSlots"/> and doubles as it fills, up to the bound.
/// </summary>
internal sealed class FrameRing
{
    private const int InitialSlots = 64;

    private Frame?[] _ring;
    private int _head;

    public FrameRing(int capacity)
    {
        Capacity = capacity;
        _ring = new Frame?[Math.Min(capacity, InitialSlots)];
    }

    public int Count { get; private set; }

    public int Capacity { get; }

    public int Space => Capacity - Count;

    public bool TryEnqueue(Frame frame)
    {
        if (Count == _ring.Length)
        {
            if (Count == Capacity)
            {
                return false;
            }
            Grow();
        }
        int tail = _head + Count;
        if (tail >= _ring.Length)
        {
            tail -= _ring.Length;
        }
        _ring[tail] = frame;
        Count++;
        return true;
    }

    public Frame Peek() => _ring[_head]!;

    /// <summary>The frame <paramref name="offset"/> places behind the head (0 is the head); it stays queued.</summary>
    public Frame Peek(int offset)
    {
        int slot = _head + offset;
        if (slot >= _ring.Length)
        {
            slot -= _ring.Length;
        }
        return _ring[slot]!;
    }

    public Frame Dequeue()
    {
        var f = _ring[_head]!;
        _ring[_head] = null;
        _head = _head + 1 == _ring.Length ? 0 : _head + 1;
        Count--;
        return f;
    }

    private void Grow()
    {
        var bigger = new Frame?[(int)Math.Min(Capacity, 2L * _ring.Length)];
        for (int i = 0; i < Count; i++)
        {
            bigger[i] = Peek(i);
        }
        _ring = bigger;
        _head = 0;
    }

    /// <summary>Releases every queued frame; returns how many.</summary>
    public int Flush()
    {
        int n = Count;
        while (Count > 0)
        {
            Dequeue().Release();
        }
        return n;
    }
}

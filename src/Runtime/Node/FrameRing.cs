using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Node;

/// <summary>A bounded FIFO ring of frames.</summary>
internal sealed class FrameRing
{
    private readonly Frame?[] _ring;
    private int _head;

    public FrameRing(int capacity)
    {
        _ring = new Frame?[capacity];
    }

    public int Count { get; private set; }

    public int Capacity => _ring.Length;

    public int Space => _ring.Length - Count;

    public bool TryEnqueue(Frame frame)
    {
        if (Count == _ring.Length)
        {
            return false;
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

namespace Camdoop.Runtime.Frames;

/// <summary>
/// A thread-safe pool of jumbo-frame buffers. Frames cross threads in the real runtime (capture thread, event
/// loop, sender), so renting and returning take a short lock; the simulator uses it from one thread.
/// </summary>
public sealed class FramePool
{
    private readonly Lock _lock = new();
    private Frame[] _free;
    private int _count;
    private long _created;

    public FramePool(int initialCapacity = 256)
    {
        _free = new Frame[Math.Max(16, initialCapacity)];
    }

    /// <summary>Frames allocated since the pool was made (grows only when more are in use than ever before).</summary>
    public long Created => Interlocked.Read(ref _created);

    /// <summary>Frames currently rented.</summary>
    public long InUse
    {
        get
        {
            lock (_lock)
            {
                return _created - _count;
            }
        }
    }

    public Frame Rent()
    {
        lock (_lock)
        {
            if (_count > 0)
            {
                var f = _free[--_count];
                _free[_count] = null!;
                f.IsFree = false;
                return f;
            }
            _created++;
        }
        return new Frame(this);
    }

    internal void Return(Frame frame)
    {
        lock (_lock)
        {
            if (frame.IsFree)
            {
                // A second release would hand the same buffer to two owners later: fail loudly at the culprit.
                throw new InvalidOperationException("frame released twice");
            }
            frame.IsFree = true;
            if (_count == _free.Length)
            {
                Array.Resize(ref _free, _free.Length * 2);
            }
            _free[_count++] = frame;
        }
    }
}

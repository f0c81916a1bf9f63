namespace Camdoop.Runtime.Frames;

/// <summary>
/// A pool of jumbo-frame buffers. Frames cross threads in the real runtime (capture thread, event loop, sender),
/// so by default renting and returning take a short lock; the simulator, single-threaded, makes an unsynchronised
/// pool (the lock was a measurable share of its per-frame cost).
/// </summary>
public sealed class FramePool
{
    private readonly Lock? _lock;
    private Frame[] _free;
    private int _count;
    private long _created;

    public FramePool(int initialCapacity = 256, bool threadSafe = true)
    {
        _free = new Frame[Math.Max(16, initialCapacity)];
        _lock = threadSafe ? new Lock() : null;
    }

    /// <summary>Frames allocated since the pool was made (grows only when more are in use than ever before).</summary>
    public long Created => Interlocked.Read(ref _created);

    /// <summary>Frames currently rented.</summary>
    public long InUse
    {
        get
        {
            if (_lock is null)
            {
                return _created - _count;
            }
            lock (_lock)
            {
                return _created - _count;
            }
        }
    }

    /// <summary>
    /// Takes over a frame rented from another pool: releasing it returns it here. For a frame that moves for good to
    /// another thread that has its own unsynchronised pool (a simulator partition receiving a frame from another).
    /// </summary>
    public void Adopt(Frame frame)
    {
        ArgumentNullException.ThrowIfNull(frame);
        if (frame.IsFree)
        {
            throw new InvalidOperationException("a free frame cannot be adopted");
        }
        frame.Pool = this;
    }

    /// <summary>Frames in the free list.</summary>
    public int FreeCount
    {
        get
        {
            if (_lock is null)
            {
                return _count;
            }
            lock (_lock)
            {
                return _count;
            }
        }
    }

    /// <summary>
    /// Moves up to <paramref name="count"/> free frames to <paramref name="target"/>; returns how many moved. For pools
    /// that frames leave for good (a simulator partition that sends more frames than it receives): the other side's
    /// surplus refills it instead of new buffers. Unsynchronised pools only, neither in use by another thread meanwhile.
    /// </summary>
    public int MoveFreeTo(FramePool target, int count)
    {
        ArgumentNullException.ThrowIfNull(target);
        if (_lock is not null || target._lock is not null)
        {
            throw new InvalidOperationException("only unsynchronised pools move frames between them");
        }
        if (ReferenceEquals(target, this))
        {
            return 0;
        }
        int moved = Math.Min(count, _count);
        for (int i = 0; i < moved; i++)
        {
            var frame = _free[--_count];
            _free[_count] = null!;
            frame.Pool = target;
            if (target._count == target._free.Length)
            {
                Array.Resize(ref target._free, target._free.Length * 2);
            }
            target._free[target._count++] = frame;
        }
        return moved;
    }

    public Frame Rent()
    {
        if (_lock is null)
        {
            return RentUnsynchronised();
        }
        lock (_lock)
        {
            return RentUnsynchronised();
        }
    }

    internal void Return(Frame frame)
    {
        if (_lock is null)
        {
            ReturnUnsynchronised(frame);
            return;
        }
        lock (_lock)
        {
            ReturnUnsynchronised(frame);
        }
    }

    private Frame RentUnsynchronised()
    {
        if (_count > 0)
        {
            var f = _free[--_count];
            _free[_count] = null!;
            f.IsFree = false;
            return f;
        }
        _created++;
        return new Frame(this);
    }

    private void ReturnUnsynchronised(Frame frame)
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

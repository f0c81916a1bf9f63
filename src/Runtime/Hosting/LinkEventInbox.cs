using System.Runtime.InteropServices;
using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Runtime.Hosting;

/// <summary>
/// The event loop's inbox: a bounded multi-producer single-consumer ring of <see cref="LinkEvent"/> structs (Vyukov's
/// bounded queue with a sequence number per cell). Producers are the links' I/O threads; the consumer is the loop.
/// Posting and taking allocate nothing; a full ring refuses the post, and the I/O thread waits while the kernel's
/// socket buffer absorbs the burst.
/// </summary>
internal sealed class LinkEventInbox
{
    private readonly Cell[] _cells;
    private readonly long _mask;
    private PaddedCounter _enqueue;
    private long _dequeue;

    public LinkEventInbox(int capacity)
    {
        if (capacity < 2)
        {
            throw new ArgumentOutOfRangeException(nameof(capacity), capacity, "at least 2");
        }
        int size = (int)System.Numerics.BitOperations.RoundUpToPowerOf2((uint)capacity);
        _cells = new Cell[size];
        _mask = size - 1;
        for (int i = 0; i < size; i++)
        {
            _cells[i].Sequence = i;
        }
    }

    public int Capacity => _cells.Length;

    /// <summary>Any thread.</summary>
    public bool TryEnqueue(in LinkEvent item)
    {
        long pos = Volatile.Read(ref _enqueue.Value);
        while (true)
        {
            ref var cell = ref _cells[pos & _mask];
            long diff = Volatile.Read(ref cell.Sequence) - pos;
            if (diff == 0)
            {
                if (Interlocked.CompareExchange(ref _enqueue.Value, pos + 1, pos) == pos)
                {
                    cell.Item = item;
                    Volatile.Write(ref cell.Sequence, pos + 1);
                    return true;
                }
                pos = Volatile.Read(ref _enqueue.Value);
            }
            else if (diff < 0)
            {
                return false;
            }
            else
            {
                pos = Volatile.Read(ref _enqueue.Value);
            }
        }
    }

    /// <summary>Consumer (event loop) only.</summary>
    public bool TryDequeue(out LinkEvent item)
    {
        long pos = _dequeue;
        ref var cell = ref _cells[pos & _mask];
        if (Volatile.Read(ref cell.Sequence) != pos + 1)
        {
            item = default;
            return false;
        }
        item = cell.Item;
        cell.Item = default;
        _dequeue = pos + 1;
        Volatile.Write(ref cell.Sequence, pos + _mask + 1);
        return true;
    }

    /// <summary>Consumer only. False positives are impossible; a post racing with this call may be missed.</summary>
    public bool IsEmpty => Volatile.Read(ref _cells[_dequeue & _mask].Sequence) != _dequeue + 1;

    private struct Cell
    {
        public long Sequence;
        public LinkEvent Item;
    }

    /// <summary>Keeps the producers' hot counter on its own cache lines.</summary>
    [StructLayout(LayoutKind.Explicit, Size = 128)]
    private struct PaddedCounter
    {
        [FieldOffset(64)]
        public long Value;
    }
}

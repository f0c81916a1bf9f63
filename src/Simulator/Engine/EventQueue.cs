using System.Runtime.CompilerServices;

namespace Camdoop.Simulator.Engine;

/// <summary>
/// The simulator's future event list: a hand-written 4-ary min-heap ordered by (time, sequence number), so events
/// due at the same time run in the order they were scheduled and every run is reproducible (.NET's PriorityQueue
/// is not stable). The heap holds only 16-byte keys; payloads sit in a slab whose slot index rides in the low bits
/// of the key. Nothing is allocated per event once the arrays have grown to the working-set size.
/// </summary>
public sealed class EventQueue
{
    private const int SlotBits = 24;
    private const long SlotMask = (1L << SlotBits) - 1;
    private const long MaxSequence = long.MaxValue >> SlotBits;

    private Entry[] _heap;
    private SimEvent[] _slab;
    private int[] _freeSlots;
    private int _freeCount;
    private int _slotsUsed;
    private int _count;
    private long _sequence;

    public EventQueue(int initialCapacity = 1024)
    {
        int capacity = Math.Max(16, initialCapacity);
        _heap = new Entry[capacity];
        _slab = new SimEvent[capacity];
        _freeSlots = new int[capacity];
    }

    /// <summary>Events waiting.</summary>
    public int Count => _count;

    /// <summary>Events ever scheduled (the next sequence number).</summary>
    public long Scheduled => _sequence;

    /// <summary>Time of the earliest event, or <see cref="long.MaxValue"/> when empty.</summary>
    public long NextTime => _count == 0 ? long.MaxValue : _heap[0].Time;

    public void Push(long time, in SimEvent ev)
    {
        if (_sequence == MaxSequence)
        {
            throw new InvalidOperationException("event sequence numbers exhausted");
        }
        int slot = TakeSlot();
        _slab[slot] = ev;
        if (_count == _heap.Length)
        {
            Array.Resize(ref _heap, _count * 2);
        }
        SiftUp(_count++, new Entry(time, (_sequence++ << SlotBits) | (uint)slot));
    }

    /// <summary>Removes the earliest event if it is due at or before <paramref name="limit"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryPop(long limit, out long time, out SimEvent ev)
    {
        if (_count == 0 || _heap[0].Time > limit)
        {
            time = 0;
            ev = default;
            return false;
        }
        var top = _heap[0];
        time = top.Time;
        int slot = (int)(top.Key & SlotMask);
        ev = _slab[slot];
        _freeSlots[_freeCount++] = slot;
        int last = --_count;
        if (last > 0)
        {
            SiftDown(_heap[last], last);
        }
        return true;
    }

    /// <summary>Drops every pending event (the sequence counter keeps counting).</summary>
    public void Clear()
    {
        _count = 0;
        _freeCount = 0;
        _slotsUsed = 0;
    }

    private int TakeSlot()
    {
        if (_freeCount > 0)
        {
            return _freeSlots[--_freeCount];
        }
        if (_slotsUsed == _slab.Length)
        {
            if (_slotsUsed > SlotMask)
            {
                throw new InvalidOperationException($"more than {SlotMask + 1} events pending");
            }
            Array.Resize(ref _slab, _slotsUsed * 2);
            Array.Resize(ref _freeSlots, _slotsUsed * 2);
        }
        return _slotsUsed++;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool Less(in Entry a, in Entry b) => a.Time < b.Time || (a.Time == b.Time && a.Key < b.Key);

    private void SiftUp(int hole, Entry entry)
    {
        var heap = _heap;
        while (hole > 0)
        {
            int parent = (hole - 1) >> 2;
            ref var p = ref heap[parent];
            if (!Less(entry, p))
            {
                break;
            }
            heap[hole] = p;
            hole = parent;
        }
        heap[hole] = entry;
    }

    /// <summary>Re-inserts <paramref name="entry"/> (the former last element) from the root of a heap of <paramref name="count"/>.</summary>
    private void SiftDown(Entry entry, int count)
    {
        var heap = _heap;
        int hole = 0;
        while (true)
        {
            int first = (hole << 2) + 1;
            if (first >= count)
            {
                break;
            }
            int best = first;
            int end = Math.Min(first + 4, count);
            for (int c = first + 1; c < end; c++)
            {
                if (Less(heap[c], heap[best]))
                {
                    best = c;
                }
            }
            if (!Less(heap[best], entry))
            {
                break;
            }
            heap[hole] = heap[best];
            hole = best;
        }
        heap[hole] = entry;
    }

    private readonly record struct Entry(long Time, long Key);
}

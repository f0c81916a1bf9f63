using System.Runtime.CompilerServices;

namespace Camdoop.Simulator.Events;

/// <summary>
/// The future event list of one simulator partition, ordered by (time, order key). The caller gives every event a
/// unique order key (<see cref="EventOrder"/>: the entity it concerns, then a sequence number of whoever scheduled
/// it), so events due at the same time come out in an order that depends only on the events themselves, not on how
/// the cube is split into partitions or in which order partitions exchanged them: every run is reproducible, and
/// one thread or several give the same run.
/// <para>
/// Two structures: a hand-written 4-ary min-heap, and a FIFO lane for events scheduled in nondecreasing (time,
/// order) (e.g. frame arrivals, "now + a fixed delay", pushed while transmissions complete in order). The lane is
/// sorted, so popping the smaller of the two heads gives exactly the order one heap would, with the bulk of the
/// events kept out of the heap; an event that would break the lane's order goes to the heap instead. Payloads sit
/// in a slab named by a slot index. Nothing is allocated per event once the arrays have grown.
/// </para>
/// </summary>
public sealed class EventQueue
{
    private Entry[] _heap;
    private SimEvent[] _slab;
    private int[] _freeSlots;
    private int _freeCount;
    private int _slotsUsed;
    private int _count;
    private long _scheduled;

    private Entry[] _lane;
    private SimEvent[] _lanePayload;
    private int _laneHead;
    private int _laneCount;
    private Entry _laneTail = new(long.MinValue, 0, 0);

    public EventQueue(int initialCapacity = 1024)
    {
        int capacity = Math.Max(16, initialCapacity);
        _heap = new Entry[capacity];
        _slab = new SimEvent[capacity];
        _freeSlots = new int[capacity];
        _lane = new Entry[capacity];
        _lanePayload = new SimEvent[capacity];
    }

    /// <summary>Events waiting.</summary>
    public int Count => _count + _laneCount;

    /// <summary>Events ever scheduled.</summary>
    public long Scheduled => _scheduled;

    /// <summary>Time of the earliest event, or <see cref="long.MaxValue"/> when empty.</summary>
    public long NextTime => Math.Min(_count == 0 ? long.MaxValue : _heap[0].Time, _laneCount == 0 ? long.MaxValue : _lane[_laneHead].Time);

    /// <summary>Time and order key of the earliest event; false when empty.</summary>
    public bool TryPeek(out long time, out ulong order)
    {
        if (LaneHeadIsNext())
        {
            time = _lane[_laneHead].Time;
            order = _lane[_laneHead].Order;
            return true;
        }
        if (_count != 0)
        {
            time = _heap[0].Time;
            order = _heap[0].Order;
            return true;
        }
        time = long.MaxValue;
        order = ulong.MaxValue;
        return false;
    }

    public void Push(long time, ulong order, in SimEvent ev)
    {
        int slot = TakeSlot();
        _slab[slot] = ev;
        if (_count == _heap.Length)
        {
            Array.Resize(ref _heap, _count * 2);
        }
        SiftUp(_count++, new Entry(time, order, slot));
        _scheduled++;
    }

    /// <summary>
    /// Schedules an event that usually sorts after every event scheduled this way before (a constant delay from
    /// now, in order): it then goes into the FIFO lane in O(1); otherwise it simply goes into the heap.
    /// </summary>
    public void PushOrdered(long time, ulong order, in SimEvent ev)
    {
        var entry = new Entry(time, order, 0);
        if (Less(entry, _laneTail))
        {
            Push(time, order, ev);
            return;
        }
        if (_laneCount == _lane.Length)
        {
            GrowLane();
        }
        int tail = _laneHead + _laneCount;
        if (tail >= _lane.Length)
        {
            tail -= _lane.Length;
        }
        _lane[tail] = entry;
        _lanePayload[tail] = ev;
        _laneCount++;
        _laneTail = entry;
        _scheduled++;
    }

    /// <summary>Removes the earliest event if it is due at or before <paramref name="limit"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryPop(long limit, out long time, out SimEvent ev)
    {
        if (LaneHeadIsNext())
        {
            ref var head = ref _lane[_laneHead];
            if (head.Time > limit)
            {
                time = 0;
                ev = default;
                return false;
            }
            time = head.Time;
            ev = _lanePayload[_laneHead];
            _laneHead = _laneHead + 1 == _lane.Length ? 0 : _laneHead + 1;
            _laneCount--;
            return true;
        }
        if (_count == 0 || _heap[0].Time > limit)
        {
            time = 0;
            ev = default;
            return false;
        }
        var top = _heap[0];
        time = top.Time;
        int slot = top.Slot;
        ev = _slab[slot];
        _freeSlots[_freeCount++] = slot;
        int last = --_count;
        if (last > 0)
        {
            SiftDown(_heap[last], last);
        }
        return true;
    }

    /// <summary>Drops every pending event.</summary>
    public void Clear()
    {
        _laneCount = 0;
        _laneHead = 0;
        _laneTail = new Entry(long.MinValue, 0, 0);
        _count = 0;
        _freeCount = 0;
        _slotsUsed = 0;
    }

    private void GrowLane()
    {
        var lane = new Entry[_lane.Length * 2];
        var payload = new SimEvent[_lane.Length * 2];
        for (int i = 0; i < _laneCount; i++)
        {
            int at = _laneHead + i;
            if (at >= _lane.Length)
            {
                at -= _lane.Length;
            }
            lane[i] = _lane[at];
            payload[i] = _lanePayload[at];
        }
        _lane = lane;
        _lanePayload = payload;
        _laneHead = 0;
    }

    private int TakeSlot()
    {
        if (_freeCount > 0)
        {
            return _freeSlots[--_freeCount];
        }
        if (_slotsUsed == _slab.Length)
        {
            Array.Resize(ref _slab, _slotsUsed * 2);
            Array.Resize(ref _freeSlots, _slotsUsed * 2);
        }
        return _slotsUsed++;
    }

    /// <summary>Whether the earliest event is the lane's head rather than the heap's top.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool LaneHeadIsNext() => _laneCount != 0 && (_count == 0 || Less(_lane[_laneHead], _heap[0]));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool Less(in Entry a, in Entry b) => a.Time < b.Time || (a.Time == b.Time && a.Order < b.Order);

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

    private readonly record struct Entry(long Time, ulong Order, int Slot);
}

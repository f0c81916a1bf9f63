namespace Camdoop.Runtime.Hosting;

/// <summary>
/// A binary min-heap of timers ordered by (due time, sequence), so timers due at the same instant fire in the order
/// they were set. Entries are structs in one array: no allocation once the array has grown to the working size.
/// </summary>
internal sealed class TimerHeap
{
    private Entry[] _items = new Entry[256];
    private long _sequence;

    public int Count { get; private set; }

    /// <summary>Due time of the earliest timer; only valid when <see cref="Count"/> &gt; 0.</summary>
    public long NextDue => _items[0].Due;

    public void Push(long due, long timerId)
    {
        if (Count == _items.Length)
        {
            Array.Resize(ref _items, Count * 2);
        }
        var entry = new Entry(due, _sequence++, timerId);
        int i = Count++;
        while (i > 0)
        {
            int parent = (i - 1) >> 1;
            if (!Before(entry, _items[parent]))
            {
                break;
            }
            _items[i] = _items[parent];
            i = parent;
        }
        _items[i] = entry;
    }

    /// <summary>Removes the earliest timer and returns its id.</summary>
    public long Pop()
    {
        long id = _items[0].TimerId;
        var last = _items[--Count];
        int i = 0;
        while (true)
        {
            int child = (2 * i) + 1;
            if (child >= Count)
            {
                break;
            }
            if (child + 1 < Count && Before(_items[child + 1], _items[child]))
            {
                child++;
            }
            if (!Before(_items[child], last))
            {
                break;
            }
            _items[i] = _items[child];
            i = child;
        }
        _items[i] = last;
        return id;
    }

    private static bool Before(in Entry a, in Entry b) => a.Due < b.Due || (a.Due == b.Due && a.Sequence < b.Sequence);

    private readonly record struct Entry(long Due, long Sequence, long TimerId);
}

using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Collects a map task's records (it is the map function's emitter), then sorts them by (bucket, key, value),
/// folds equal keys with the combiner when the job is associative, and writes them to a sink bucket by bucket.
/// Keys and values live back to back in one arena; the sort moves 24-byte entries only. The arena and the entry
/// arrays are kept per thread between map tasks (a server maps many chunks, the simulator 512 servers' inputs):
/// growing them afresh for every task was most of what the map phase allocated.
/// </summary>
internal sealed class SortBuffer : IMapEmitter, IDisposable
{
    private const int EntryBytes = 24;

    // Runs up to this long are insertion sorted.
    private const int ShortRun = 16;

    // Arrays larger than this are not kept for the next task on the thread.
    private const long MaxCachedBytes = 32L * 1024 * 1024;

    [ThreadStatic]
    private static Arrays? t_cached;

    private readonly IMapReduceJob _job;
    private readonly IKeyComparer? _comparer;
    private readonly int _reduceTasks;
    private readonly long _budgetBytes;
    private readonly ValueFolder _folder;
    private byte[] _arena;
    private int _arenaLength;
    private Entry[] _entries;
    private int _count;

    // Sort scratch, kept between sorts.
    private Entry[] _sorted;
    private int[] _bucketStart;
    private int[] _bucketNext;
    private ulong[] _keys;
    private int[] _order;
    private ulong[] _keyScratch;
    private int[] _orderScratch;

    public SortBuffer(IMapReduceJob job, int reduceTasks, long budgetBytes)
    {
        _job = job;
        _comparer = job.KeyComparer;
        _reduceTasks = reduceTasks;
        _budgetBytes = budgetBytes;
        _folder = new ValueFolder(job);
        var arrays = t_cached ?? new Arrays();
        t_cached = null;
        (_arena, _entries, _sorted, _bucketStart, _bucketNext) =
            (arrays.Arena, arrays.Entries, arrays.Sorted, arrays.BucketStart, arrays.BucketNext);
        (_keys, _order, _keyScratch, _orderScratch) = (arrays.Keys, arrays.Order, arrays.KeyScratch, arrays.OrderScratch);
    }

    /// <summary>
    /// Encoded size of the records collected since the last sort: what the sort writes at most (combining only
    /// shrinks it), so an in-memory sink is sized once instead of doubled.
    /// </summary>
    public long EncodedBytes { get; private set; }

    /// <summary>Hands the arrays to the next map task on this thread, unless they grew too large to keep.</summary>
    public void Dispose()
    {
        long bytes = _arena.LongLength + (_entries.LongLength + _sorted.LongLength) * EntryBytes + _keys.LongLength * 24;
        if (bytes <= MaxCachedBytes)
        {
            t_cached = new Arrays
            {
                Arena = _arena, Entries = _entries, Sorted = _sorted, BucketStart = _bucketStart,
                BucketNext = _bucketNext, Keys = _keys, Order = _order, KeyScratch = _keyScratch, OrderScratch = _orderScratch,
            };
        }
        _arena = [];
        _entries = [];
        _sorted = [];
        _count = 0;
        _arenaLength = 0;
    }

    public long EmittedRecords { get; private set; }

    public long EmittedLogicalBytes { get; private set; }

    public long MalformedRecords { get; private set; }

    public bool IsFull => _arenaLength + (long)_count * EntryBytes >= _budgetBytes;

    public bool IsEmpty => _count == 0;

    public void CountMalformedRecord() => MalformedRecords++;

    public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        if ((uint)key.Length > RecordLimits.MaxKeyBytes || (uint)value.Length > RecordLimits.MaxValueBytes)
        {
            // The message is built only on failure: Emit runs for every record.
            RecordLimits.Check(key.Length, value.Length, $"map of job '{_job.Name}'");
        }
        int reduceTask = _job.Partition(key, _reduceTasks);
        if ((uint)reduceTask >= (uint)_reduceTasks)
        {
            throw new InvalidOperationException(
                $"the partition function of job '{_job.Name}' returned {reduceTask} for {_reduceTasks} reduce tasks");
        }
        int length = key.Length + value.Length;
        if (_arenaLength + length > _arena.Length)
        {
            long size = Math.Max(_arena.Length * 2L, (long)_arenaLength + length);
            if (size > Array.MaxLength)
            {
                throw new InvalidOperationException("a map task's sort buffer exceeds 2 GB; lower the sort buffer size");
            }
            Array.Resize(ref _arena, (int)size);
        }
        if (_count == _entries.Length)
        {
            Array.Resize(ref _entries, _entries.Length * 2);
        }
        key.CopyTo(_arena.AsSpan(_arenaLength));
        value.CopyTo(_arena.AsSpan(_arenaLength + key.Length));
        _entries[_count++] = new Entry
        {
            Prefix = _comparer is null ? KeyPrefix.Of(key) : 0,
            Offset = _arenaLength,
            KeyLength = key.Length,
            ValueLength = value.Length,
            Bucket = reduceTask * Stripes.Count + Stripes.Of(key),
        };
        _arenaLength += length;
        EncodedBytes += RecordCodec.EncodedLength(key.Length, value.Length);
        EmittedRecords++;
        EmittedLogicalBytes += length;
    }

    /// <summary>Sorts, combines and writes everything collected to <paramref name="sink"/>, then empties the buffer.</summary>
    public void SortAndWrite(IBucketSink sink)
    {
        var entries = Sort();
        bool fold = _job.IsAssociativeCommutative;
        int bucket = -1;
        int e = 0;
        while (e < entries.Length)
        {
            ref readonly var first = ref entries[e];
            if (first.Bucket != bucket)
            {
                if (bucket >= 0)
                {
                    sink.EndBucket();
                }
                bucket = first.Bucket;
                sink.BeginBucket(bucket);
            }
            var key = _arena.AsSpan(first.Offset, first.KeyLength);
            var value = _arena.AsSpan(first.Offset + first.KeyLength, first.ValueLength);
            int next = e + 1;
            if (fold)
            {
                while (next < entries.Length && SameKey(in first, in entries[next]))
                {
                    next++;
                }
            }
            if (next == e + 1)
            {
                sink.Write(key, value);
            }
            else
            {
                _folder.Start(value);
                for (int k = e + 1; k < next; k++)
                {
                    ref readonly var other = ref entries[k];
                    _folder.Fold(key, _arena.AsSpan(other.Offset + other.KeyLength, other.ValueLength));
                }
                sink.Write(key, _folder.Value);
            }
            e = next;
        }
        if (bucket >= 0)
        {
            sink.EndBucket();
        }
        _count = 0;
        _arenaLength = 0;
        EncodedBytes = 0;
    }

    /// <summary>
    /// Orders the entries by (bucket, key, value): a counting sort of (prefix, entry index) pairs by bucket, then per
    /// bucket a radix sort of the 8-byte key prefixes (<see cref="PrefixRadixSort"/>), a gather of the entries in that
    /// order, and the full comparison only inside runs of equal prefixes. With a job-defined key order (no prefixes)
    /// each bucket is sorted with the comparer.
    /// </summary>
    private Span<Entry> Sort()
    {
        var entries = _entries.AsSpan(0, _count);
        int buckets = _reduceTasks * Stripes.Count;
        if (_bucketStart.Length < buckets + 1)
        {
            _bucketStart = new int[buckets + 1];
        }
        var start = _bucketStart.AsSpan(0, buckets + 1);
        start.Clear();
        foreach (ref readonly var e in entries)
        {
            start[e.Bucket + 1]++;
        }
        for (int b = 0; b < buckets; b++)
        {
            start[b + 1] += start[b];
        }
        if (_sorted.Length < _count)
        {
            _sorted = new Entry[_entries.Length];
        }
        if (_keys.Length < _count)
        {
            int length = _entries.Length;
            (_keys, _order, _keyScratch, _orderScratch) = (new ulong[length], new int[length], new ulong[length], new int[length]);
        }
        var keys = _keys.AsSpan(0, _count);
        var order = _order.AsSpan(0, _count);
        var next = _bucketNext.Length >= buckets ? _bucketNext : (_bucketNext = new int[buckets]);
        start[..buckets].CopyTo(next);
        for (int i = 0; i < entries.Length; i++)
        {
            ref readonly var e = ref entries[i];
            int position = next[e.Bucket]++;
            keys[position] = e.Prefix;
            order[position] = i;
        }
        if (_comparer is null)
        {
            for (int b = 0; b < buckets; b++)
            {
                int from = start[b];
                int length = start[b + 1] - from;
                if (length > 1)
                {
                    PrefixRadixSort.Sort(keys.Slice(from, length), order.Slice(from, length), _keyScratch, _orderScratch);
                }
            }
        }
        var sorted = _sorted.AsSpan(0, _count);
        for (int i = 0; i < sorted.Length; i++)
        {
            sorted[i] = entries[order[i]];
        }
        var comparer = new EntryComparer(_arena, _comparer);
        Comparison<Entry>? comparison = null;
        if (_comparer is not null)
        {
            for (int b = 0; b < buckets; b++)
            {
                SortRun(sorted[start[b]..start[b + 1]], comparer, ref comparison);
            }
        }
        else
        {
            // Entries with equal (bucket, prefix) are adjacent now: order each such run in full.
            int i = 0;
            while (i < sorted.Length)
            {
                int j = i + 1;
                while (j < sorted.Length && sorted[j].Prefix == sorted[i].Prefix && sorted[j].Bucket == sorted[i].Bucket)
                {
                    j++;
                }
                if (j - i > 1)
                {
                    SortEqualPrefixes(sorted[i..j], comparer, ref comparison);
                }
                i = j;
            }
        }
        // The sorted entries become the buffer's entries (the old array is the next sort's scratch).
        (_entries, _sorted) = (_sorted, _entries);
        return _entries.AsSpan(0, _count);
    }

    /// <summary>
    /// Orders a run of entries with equal (bucket, prefix). Short runs are the common case (keys that share their
    /// first eight bytes): they are insertion sorted by the next eight key bytes, compared in full only where those
    /// tie too. Ordering by those bytes first agrees with the full order for the same reason the prefix does.
    /// </summary>
    private void SortEqualPrefixes(Span<Entry> run, EntryComparer comparer, ref Comparison<Entry>? comparison)
    {
        if (run.Length > ShortRun)
        {
            SortRun(run, comparer, ref comparison);
            return;
        }
        Span<ulong> seconds = stackalloc ulong[ShortRun];
        for (int i = 0; i < run.Length; i++)
        {
            ref readonly var e = ref run[i];
            seconds[i] = e.KeyLength <= 8 ? 0 : KeyPrefix.Of(_arena.AsSpan(e.Offset + 8, e.KeyLength - 8));
        }
        for (int i = 1; i < run.Length; i++)
        {
            var entry = run[i];
            ulong second = seconds[i];
            int j = i - 1;
            while (j >= 0 && (seconds[j] > second || (seconds[j] == second && comparer.Compare(run[j], entry) > 0)))
            {
                run[j + 1] = run[j];
                seconds[j + 1] = seconds[j];
                j--;
            }
            run[j + 1] = entry;
            seconds[j + 1] = second;
        }
    }

    /// <summary>
    /// Insertion sort for short runs, introsort otherwise (with one delegate per sort: sorting a span with a struct
    /// comparer boxes it and allocates a delegate per call).
    /// </summary>
    private static void SortRun(Span<Entry> run, EntryComparer comparer, ref Comparison<Entry>? comparison)
    {
        if (run.Length > ShortRun)
        {
            run.Sort(comparison ??= comparer.Compare);
            return;
        }
        for (int i = 1; i < run.Length; i++)
        {
            var entry = run[i];
            int j = i - 1;
            while (j >= 0 && comparer.Compare(run[j], entry) > 0)
            {
                run[j + 1] = run[j];
                j--;
            }
            run[j + 1] = entry;
        }
    }

    private bool SameKey(in Entry a, in Entry b)
    {
        if (a.Bucket != b.Bucket || a.Prefix != b.Prefix)
        {
            return false;
        }
        var x = _arena.AsSpan(a.Offset, a.KeyLength);
        var y = _arena.AsSpan(b.Offset, b.KeyLength);
        return _comparer is null ? x.SequenceEqual(y) : _comparer.Compare(x, y) == 0;
    }

    private sealed class Arrays
    {
        public byte[] Arena = new byte[64 * 1024];
        public Entry[] Entries = new Entry[4096];
        public Entry[] Sorted = [];
        public int[] BucketStart = [];
        public int[] BucketNext = [];
        public ulong[] Keys = [];
        public int[] Order = [];
        public ulong[] KeyScratch = [];
        public int[] OrderScratch = [];
    }

    private struct Entry
    {
        public ulong Prefix;
        public int Offset;
        public int KeyLength;
        public int ValueLength;
        public int Bucket;
    }

    private readonly struct EntryComparer(byte[] arena, IKeyComparer? comparer) : IComparer<Entry>
    {
        public int Compare(Entry a, Entry b)
        {
            if (a.Bucket != b.Bucket)
            {
                return a.Bucket < b.Bucket ? -1 : 1;
            }
            if (a.Prefix != b.Prefix)
            {
                return a.Prefix < b.Prefix ? -1 : 1;
            }
            var x = arena.AsSpan(a.Offset, a.KeyLength);
            var y = arena.AsSpan(b.Offset, b.KeyLength);
            int c = comparer is null ? KeyPrefix.CompareTail(x, y) : comparer.Compare(x, y);
            return c != 0
                ? c
                : arena.AsSpan(a.Offset + a.KeyLength, a.ValueLength).SequenceCompareTo(arena.AsSpan(b.Offset + b.KeyLength, b.ValueLength));
        }
    }
}

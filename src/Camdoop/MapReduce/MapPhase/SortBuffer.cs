using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Collects a map task's records (it is the map function's emitter), then sorts them by (bucket, key, value),
/// folds equal keys with the combiner when the job is associative, and writes them to a sink bucket by bucket.
/// Records live back to back in one arena in the record stream encoding (<see cref="RecordCodec"/>), so a record
/// that needs no combining is written out with one copy; the sort orders (key prefix, arena offset) pairs, and
/// the writer then touches each record once, in sorted order. The arena and the sort arrays are kept per thread
/// between map tasks (a server maps many chunks, the simulator 512 servers' inputs): growing them afresh for
/// every task was most of what the map phase allocated.
/// </summary>
internal sealed class SortBuffer : IMapEmitter, IDisposable
{
    // What a record costs against the budget besides its key and value (the size of the entries the buffer once
    // kept per record; spill points, and so the spill count, stay as they were).
    private const int EntryBytes = 24;

    // Runs of equal prefixes up to this long are insertion sorted.
    private const int ShortRun = 16;

    // The radix sort orders each bucket by the first four key bytes only: runs sharing them are short (the rest of
    // the order is settled when they are written) and this halves its passes.
    private const int RadixBytes = 4;
    private const int HighBitsSorted = 64 - (8 * RadixBytes);

    // Records whose arena lines are requested ahead of the run being ordered and written.
    private const int PrefetchDistance = 16;

    // Arrays larger than this are not kept for the next task on the thread.
    private const long MaxCachedBytes = 32L * 1024 * 1024;

    [ThreadStatic]
    private static Arrays? s_threadArrays;

    private readonly IMapReduceJob _job;
    private readonly IKeyComparer? _comparer;
    private readonly int _reduceTasks;
    private readonly long _budgetBytes;
    private readonly ValueFolder _folder;
    private readonly int[] _bucketSizes;
    private byte[] _arena;
    private int _arenaLength;
    private long _logicalBytes;
    private RecordRef[] _records;
    private int _count;

    // Sort arrays, kept between sorts: per bucket, the sorted key prefixes and the records' arena offsets in order.
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
        _bucketSizes = new int[reduceTasks * Stripes.Count];
        var arrays = s_threadArrays ?? new Arrays();
        s_threadArrays = null;
        (_arena, _records, _bucketStart, _bucketNext) = (arrays.Arena, arrays.Records, arrays.BucketStart, arrays.BucketNext);
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
        long bytes = _arena.LongLength + _records.LongLength * 16 + _keys.LongLength * 24;
        if (bytes <= MaxCachedBytes)
        {
            s_threadArrays = new Arrays
            {
                Arena = _arena,
                Records = _records,
                BucketStart = _bucketStart,
                BucketNext = _bucketNext,
                Keys = _keys,
                Order = _order,
                KeyScratch = _keyScratch,
                OrderScratch = _orderScratch,
            };
        }
        _arena = [];
        _records = [];
        _count = 0;
        _arenaLength = 0;
        _logicalBytes = 0;
    }

    public long EmittedRecords { get; private set; }

    public long EmittedLogicalBytes { get; private set; }

    public long MalformedRecords { get; private set; }

    public bool IsFull => _logicalBytes + (long)_count * EntryBytes >= _budgetBytes;

    public bool IsEmpty => _count == 0;

    public void CountMalformedRecord() => MalformedRecords++;

    public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        // Failures are raised by helpers: their message building, inlined into every map function's Emit call,
        // used up the inlining budget that the copies below need.
        if ((uint)key.Length > RecordLimits.MaxKeyBytes || (uint)value.Length > RecordLimits.MaxValueBytes)
        {
            ThrowRecordTooLarge(key.Length, value.Length);
        }
        // One reduce task takes every key: 0 is the only valid answer, so the job's partitioner is not asked.
        int reduceTask = _reduceTasks == 1 ? 0 : _job.Partition(key, _reduceTasks);
        if ((uint)reduceTask >= (uint)_reduceTasks)
        {
            ThrowBadPartition(reduceTask);
        }
        int length = RecordCodec.EncodedLength(key.Length, value.Length);
        if (_arenaLength + length > _arena.Length)
        {
            GrowArena(length);
        }
        if (_count == _records.Length)
        {
            Array.Resize(ref _records, _records.Length * 2);
        }
        _records[_count++] = new RecordRef
        {
            Prefix = _comparer is null ? KeyPrefix.Of(key) : 0,
            Offset = _arenaLength,
            Bucket = reduceTask * Stripes.Count, // the stripe is added when sorting
        };
        var destination = _arena.AsSpan(_arenaLength, length);
        if (length - key.Length - value.Length == 2)
        {
            // Both lengths below 128: one header byte each (RecordCodec's encoding).
            destination[0] = (byte)key.Length;
            destination[1] = (byte)value.Length;
            ShortCopy.Copy(key, destination[2..]);
            ShortCopy.Copy(value, destination[(2 + key.Length)..]);
        }
        else
        {
            RecordCodec.Write(destination, key, value);
        }
        _arenaLength += length;
        _logicalBytes += key.Length + value.Length;
        EncodedBytes += length;
        EmittedRecords++;
        EmittedLogicalBytes += key.Length + value.Length;
    }

    private void GrowArena(int length)
    {
        long size = Math.Max(_arena.Length * 2L, (long)_arenaLength + length);
        if (size > Array.MaxLength)
        {
            throw new InvalidOperationException("a map task's sort buffer exceeds 2 GB; lower the sort buffer size");
        }
        Array.Resize(ref _arena, (int)size);
    }

    [DoesNotReturn]
    private void ThrowRecordTooLarge(int keyLength, int valueLength)
    {
        RecordLimits.Check(keyLength, valueLength, $"map of job '{_job.Name}'");
        throw new UnreachableException();
    }

    [DoesNotReturn]
    private void ThrowBadPartition(int reduceTask) => throw new InvalidOperationException(
        $"the partition function of job '{_job.Name}' returned {reduceTask} for {_reduceTasks} reduce tasks");

    /// <summary>
    /// Sorts, combines and writes everything collected to <paramref name="sink"/>, then empties the buffer. Runs of
    /// equal prefixes are put in full order just before they are written, while their keys are in cache anyway.
    /// </summary>
    public void SortAndWrite(IBucketSink sink)
    {
        Sort();
        var keys = _keys.AsSpan(0, _count);
        var order = _order.AsSpan(0, _count);
        bool fold = _job.IsAssociativeCommutative;
        Comparison<int>? comparison = null;
        for (int bucket = 0; bucket < _bucketSizes.Length; bucket++)
        {
            int end = _bucketStart[bucket + 1];
            int i = _bucketStart[bucket];
            if (i == end)
            {
                continue;
            }
            sink.BeginBucket(bucket);
            int prefetched = i;
            while (i < end)
            {
                int j = i + 1;
                if (_comparer is null)
                {
                    ulong high = keys[i] >> HighBitsSorted;
                    while (j < end && keys[j] >> HighBitsSorted == high)
                    {
                        j++;
                    }
                    for (int ahead = Math.Min(end, j + PrefetchDistance); prefetched < ahead; prefetched++)
                    {
                        Prefetch(order[prefetched]);
                    }
                    if (j - i > 1)
                    {
                        FinishRun(keys[i..j], order[i..j], ref comparison);
                    }
                }
                else
                {
                    j = end; // the bucket is sorted already
                }
                WriteRun(sink, order[i..j], fold);
                i = j;
            }
            sink.EndBucket();
        }
        _bucketSizes.AsSpan().Clear();
        _count = 0;
        _arenaLength = 0;
        _logicalBytes = 0;
        EncodedBytes = 0;
    }

    /// <summary>
    /// Asks for the cache line of the record at <paramref name="offset"/>: records are visited in key order, at
    /// random places of an arena larger than the L2 cache, and waiting for each line was a large part of the writing.
    /// </summary>
    private void Prefetch(int offset) => CacheLine.Prefetch(ref _arena[offset]);

    /// <summary>Writes sorted records, folding equal keys into one record when <paramref name="fold"/>.</summary>
    private void WriteRun(IBucketSink sink, ReadOnlySpan<int> run, bool fold)
    {
        int e = 0;
        while (e < run.Length)
        {
            int offset = run[e];
            var bounds = Bounds(offset);
            int next = e + 1;
            if (fold)
            {
                while (next < run.Length && SameKey(offset, bounds, run[next]))
                {
                    next++;
                }
            }
            if (next == e + 1)
            {
                sink.WriteEncoded(_arena.AsSpan(offset, bounds.Length), bounds.KeyLength, bounds.ValueLength);
            }
            else
            {
                var key = _arena.AsSpan(offset + bounds.KeyOffset, bounds.KeyLength);
                _folder.Start(_arena.AsSpan(offset + bounds.ValueOffset, bounds.ValueLength));
                for (int k = e + 1; k < next; k++)
                {
                    _folder.Fold(key, Value(run[k]));
                }
                sink.Write(key, _folder.Value);
            }
            e = next;
        }
    }

    /// <summary>
    /// Puts every bucket's records nearly in order: a counting sort of (prefix, arena offset) pairs by bucket, then a
    /// radix sort of each bucket by the first <see cref="RadixBytes"/> bytes of the key prefixes
    /// (<see cref="PrefixRadixSort"/>); runs sharing those are ordered in full when written. With a job-defined key
    /// order (no prefixes) each bucket is sorted with the comparer.
    /// </summary>
    private void Sort()
    {
        var records = _records.AsSpan(0, _count);
        int buckets = _bucketSizes.Length;
        // Stripes are hashed here, in one tight loop over the records, rather than in Emit: among the map function's
        // branches on key lengths, each hash ran alone; here consecutive hashes overlap.
        foreach (ref var record in records)
        {
            record.Bucket += Stripes.Of(Key(record.Offset));
            _bucketSizes[record.Bucket]++;
        }
        if (_bucketStart.Length < buckets + 1)
        {
            (_bucketStart, _bucketNext) = (new int[buckets + 1], new int[buckets]);
        }
        var start = _bucketStart.AsSpan(0, buckets + 1);
        start[0] = 0;
        for (int b = 0; b < buckets; b++)
        {
            start[b + 1] = start[b] + _bucketSizes[b];
        }
        if (_keys.Length < _count)
        {
            int length = _records.Length;
            (_keys, _order, _keyScratch, _orderScratch) = (new ulong[length], new int[length], new ulong[length], new int[length]);
        }
        var keys = _keys.AsSpan(0, _count);
        var order = _order.AsSpan(0, _count);
        var next = _bucketNext.AsSpan(0, buckets);
        start[..buckets].CopyTo(next);
        foreach (ref readonly var record in records)
        {
            int position = next[record.Bucket]++;
            keys[position] = record.Prefix;
            order[position] = record.Offset;
        }
        Comparison<int>? comparison = null;
        for (int b = 0; b < buckets; b++)
        {
            int from = start[b];
            int length = start[b + 1] - from;
            if (length < 2)
            {
                continue;
            }
            if (_comparer is null)
            {
                PrefixRadixSort.SortByHighBytes(keys.Slice(from, length), order.Slice(from, length), _keyScratch, _orderScratch, RadixBytes);
            }
            else
            {
                order.Slice(from, length).Sort(comparison ??= CompareRecords);
            }
        }
    }

    /// <summary>
    /// Orders a run of records whose prefixes share their first <see cref="RadixBytes"/> bytes: short runs by
    /// insertion on (prefix, next eight key bytes, full comparison), long ones by a radix sort of the whole prefixes
    /// and then each run of equal prefixes.
    /// </summary>
    private void FinishRun(Span<ulong> keys, Span<int> run, ref Comparison<int>? comparison)
    {
        if (run.Length > ShortRun)
        {
            PrefixRadixSort.Sort(keys, run, _keyScratch, _orderScratch);
            int i = 0;
            while (i < run.Length)
            {
                int j = i + 1;
                while (j < run.Length && keys[j] == keys[i])
                {
                    j++;
                }
                if (j - i > 1)
                {
                    SortEqualPrefixes(run[i..j], ref comparison);
                }
                i = j;
            }
            return;
        }
        Span<ulong> seconds = stackalloc ulong[ShortRun];
        for (int i = 0; i < run.Length; i++)
        {
            var key = Key(run[i]);
            seconds[i] = key.Length <= 8 ? 0 : KeyPrefix.Of(key[8..]);
        }
        for (int i = 1; i < run.Length; i++)
        {
            ulong prefix = keys[i];
            int offset = run[i];
            ulong second = seconds[i];
            int j = i - 1;
            while (j >= 0 && (keys[j] > prefix
                || (keys[j] == prefix && (seconds[j] > second || (seconds[j] == second && CompareRecords(run[j], offset) > 0)))))
            {
                keys[j + 1] = keys[j];
                run[j + 1] = run[j];
                seconds[j + 1] = seconds[j];
                j--;
            }
            keys[j + 1] = prefix;
            run[j + 1] = offset;
            seconds[j + 1] = second;
        }
    }

    /// <summary>
    /// Orders a run of records with equal (bucket, prefix). Short runs are the common case (keys that share their
    /// first eight bytes): they are insertion sorted by the next eight key bytes, compared in full only where those
    /// tie too. Ordering by those bytes first agrees with the full order for the same reason the prefix does.
    /// </summary>
    private void SortEqualPrefixes(Span<int> run, ref Comparison<int>? comparison)
    {
        if (run.Length > ShortRun)
        {
            // One delegate per sort: sorting with a struct comparer boxes it and allocates a delegate per call.
            run.Sort(comparison ??= CompareRecords);
            return;
        }
        Span<ulong> seconds = stackalloc ulong[ShortRun];
        for (int i = 0; i < run.Length; i++)
        {
            var key = Key(run[i]);
            seconds[i] = key.Length <= 8 ? 0 : KeyPrefix.Of(key[8..]);
        }
        for (int i = 1; i < run.Length; i++)
        {
            int offset = run[i];
            ulong second = seconds[i];
            int j = i - 1;
            while (j >= 0 && (seconds[j] > second || (seconds[j] == second && CompareRecords(run[j], offset) > 0)))
            {
                run[j + 1] = run[j];
                seconds[j + 1] = seconds[j];
                j--;
            }
            run[j + 1] = offset;
            seconds[j + 1] = second;
        }
    }

    /// <summary>
    /// Full order of two records of one bucket whose prefixes are equal (or unused, with a job-defined key order):
    /// key, then value bytes.
    /// </summary>
    private int CompareRecords(int x, int y)
    {
        var keyX = Key(x);
        var keyY = Key(y);
        int c = _comparer is null ? KeyPrefix.CompareTail(keyX, keyY) : _comparer.Compare(keyX, keyY);
        return c != 0 ? c : Value(x).SequenceCompareTo(Value(y));
    }

    /// <summary>Whether the record at <paramref name="other"/> has the key of the one at <paramref name="offset"/>, in the same run.</summary>
    private bool SameKey(int offset, RecordBounds bounds, int other)
    {
        var key = _arena.AsSpan(offset + bounds.KeyOffset, bounds.KeyLength);
        return _comparer is null ? key.SequenceEqual(Key(other)) : _comparer.Compare(key, Key(other)) == 0;
    }

    private RecordBounds Bounds(int offset)
    {
        // The buffer wrote these records itself: they parse.
        RecordCodec.TryParse(_arena.AsSpan(offset), out var bounds);
        return bounds;
    }

    private ReadOnlySpan<byte> Key(int offset)
    {
        var bounds = Bounds(offset);
        return _arena.AsSpan(offset + bounds.KeyOffset, bounds.KeyLength);
    }

    private ReadOnlySpan<byte> Value(int offset)
    {
        var bounds = Bounds(offset);
        return _arena.AsSpan(offset + bounds.ValueOffset, bounds.ValueLength);
    }

    private sealed class Arrays
    {
        public byte[] Arena = new byte[64 * 1024];
        public RecordRef[] Records = new RecordRef[4096];
        public int[] BucketStart = [];
        public int[] BucketNext = [];
        public ulong[] Keys = [];
        public int[] Order = [];
        public ulong[] KeyScratch = [];
        public int[] OrderScratch = [];
    }

    /// <summary>A record as collected: its key prefix, where it starts in the arena, and its bucket.</summary>
    private struct RecordRef
    {
        public ulong Prefix;
        public int Offset;
        public int Bucket;
    }
}

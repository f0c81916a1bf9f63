using System.Runtime.CompilerServices;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Keeps all buckets in one byte array, back to back, with their start offsets, and <see cref="StreamMerger.LendSlackBytes"/>
/// bytes after the last, so that a vertex's merger can read any bucket in place (<see cref="StreamMerger.TryLend"/>).
/// </summary>
internal sealed class MemorySink(int buckets, int initialCapacity = 64 * 1024) : IBucketSink
{
    private const int TrailingSlack = StreamMerger.LendSlackBytes;

    // Every byte up to Length is written before it is read: no need to clear (the simulator keeps 1.2 GB of these).
    // The slack past the last bucket is only ever read past a record's end, and those bytes are never used.
    private byte[] _data = GC.AllocateUninitializedArray<byte>(Math.Max(16, initialCapacity) + TrailingSlack);
    private int _bucket = -1;

    public int Length { get; private set; }

    public byte[] Data => _data;

    /// <summary>Start offset of each bucket; entry [buckets] is the end.</summary>
    public int[] BucketStart { get; } = new int[buckets + 1];

    public BucketCounters Counters { get; } = new(buckets);

    public void BeginBucket(int bucket)
    {
        Counters.Open(bucket);
        // Buckets with no records still get an (empty) range.
        for (int b = _bucket + 1; b <= bucket; b++)
        {
            BucketStart[b] = Length;
        }
        _bucket = bucket;
    }

    public void Write(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        int length = RecordCodec.EncodedLength(key.Length, value.Length);
        EnsureRoom(length);
        Length += RecordCodec.Write(_data.AsSpan(Length), key, value);
        Counters.Add(key.Length, value.Length, length);
    }

    public void WriteEncoded(ReadOnlySpan<byte> record, int keyLength, int valueLength)
    {
        EnsureRoom(record.Length);
        ShortCopy.Copy(record, _data.AsSpan(Length));
        Length += record.Length;
        Counters.Add(keyLength, valueLength, record.Length);
    }

    public void EndBucket() => Counters.Close();

    /// <summary>
    /// Makes a completed sink of <paramref name="length"/> bytes whose buckets the caller has already placed
    /// (<see cref="BucketStart"/>, every entry) and counted (<see cref="Counters"/>); returns the array to copy the
    /// records into, uncleared, with the trailing slack.
    /// </summary>
    public byte[] AdoptPlaced(int length)
    {
        _data = GC.AllocateUninitializedArray<byte>(length + TrailingSlack);
        Length = length;
        _bucket = BucketStart.Length - 1;
        return _data;
    }

    /// <summary>Closes the remaining (empty) buckets and trims the buffer to the data and its slack (many servers' outputs may stay in memory).</summary>
    public void Complete()
    {
        Counters.Close();
        if (_data.Length != Length + TrailingSlack)
        {
            Array.Resize(ref _data, Length + TrailingSlack);
        }
        for (int b = _bucket + 1; b < BucketStart.Length; b++)
        {
            BucketStart[b] = Length;
        }
        _bucket = BucketStart.Length - 1;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EnsureRoom(int length)
    {
        if (Length + length > _data.Length)
        {
            Grow(length);
        }
    }

    private void Grow(int length)
    {
        long size = Math.Max(_data.Length * 2L, (long)Length + length);
        if (size > Array.MaxLength)
        {
            throw new InvalidOperationException("in-memory map output exceeds 2 GB; give the map task an output directory");
        }
        var larger = GC.AllocateUninitializedArray<byte>((int)size);
        _data.AsSpan(0, Length).CopyTo(larger);
        _data = larger;
    }

    public ReadOnlyMemory<byte> Bucket(int bucket) => _data.AsMemory(BucketStart[bucket], BucketStart[bucket + 1] - BucketStart[bucket]);
}

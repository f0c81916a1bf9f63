using Camdoop.MapReduce.Jobs;
using Camdoop.Records;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// Where a stream starts again after a failure (the Camdoop paper, §4.2): after the first <see cref="Skip"/> records
/// whose key is <see cref="Key"/>, that is, at the first record with a larger key or beyond those records; or at the
/// very first record (<see cref="Start"/>). Streams are sorted by (key, value), so a position given by a key and a
/// count of equal keys means the same record in any copy of the stream, however it is cut into frames or epochs: what
/// the receiver held is never sent again, and nothing after it is lost. Equal keys occur in a stream only where it is
/// merged without combining (every key appears once in a combined stream); <see cref="SkipAll"/> skips every record
/// of the key (a reducer that wrote the key's result holds all of them).
/// </summary>
public sealed class ResumePoint
{
    /// <summary>Skip every record with the key.</summary>
    public const uint SkipAll = uint.MaxValue;

    private ResumePoint(bool hasKey, byte[] key, uint skip)
    {
        HasKey = hasKey;
        Key = key;
        Skip = skip;
    }

    /// <summary>The stream's first record.</summary>
    public static ResumePoint Start { get; } = new(false, [], 0);

    public bool HasKey { get; }

    /// <summary>The last key held (empty without <see cref="HasKey"/>).</summary>
    public byte[] Key { get; }

    /// <summary>Records with <see cref="Key"/> already held (<see cref="SkipAll"/>: all of them).</summary>
    public uint Skip { get; }

    public static ResumePoint After(ReadOnlySpan<byte> key, uint skip) => new(true, key.ToArray(), skip);

    /// <summary>The same point for a source that is asked for every record with the key (its consumer drops the held ones).</summary>
    public ResumePoint WithoutSkip() => HasKey && Skip != 0 ? new ResumePoint(true, Key, 0) : this;

    /// <summary>Whether two requests name the same point.</summary>
    public bool SameAs(ResumePoint other)
    {
        ArgumentNullException.ThrowIfNull(other);
        return HasKey == other.HasKey && Skip == other.Skip && Key.AsSpan().SequenceEqual(other.Key);
    }

    /// <summary>
    /// Steps over the records of <paramref name="records"/> (a record stream starting at a record boundary) that come
    /// before the point; <paramref name="skipped"/> carries the equal keys seen so far across calls. Returns the offset
    /// of the first record after the point, or -1 when every complete record of the span lies before it;
    /// <paramref name="consumed"/> is then where the complete records end (the caller goes on from there with more
    /// bytes). Throws <see cref="InvalidDataException"/> on a corrupt stream.
    /// </summary>
    public int FindFirstAfter(ReadOnlySpan<byte> records, IKeyComparer? comparer, ref uint skipped, out int consumed)
    {
        consumed = 0;
        if (!HasKey)
        {
            return 0;
        }
        var key = Key.AsSpan();
        while (consumed < records.Length)
        {
            var status = RecordCodec.TryParse(records[consumed..], out var bounds);
            if (status == RecordParseStatus.Malformed)
            {
                throw new InvalidDataException("a corrupt record stream while looking for the resume point");
            }
            if (status == RecordParseStatus.Incomplete)
            {
                return -1;
            }
            var recordKey = records.Slice(consumed + bounds.KeyOffset, bounds.KeyLength);
            int order = comparer?.Compare(recordKey, key) ?? recordKey.SequenceCompareTo(key);
            if (order > 0 || (order == 0 && Skip != SkipAll && skipped >= Skip))
            {
                return consumed;
            }
            if (order == 0)
            {
                skipped++;
            }
            consumed += bounds.Length;
        }
        return -1;
    }

    /// <summary>
    /// Whether a stream that starts right after this point holds every record after <paramref name="later"/>: this
    /// point is the same as <paramref name="later"/> or comes before it.
    /// </summary>
    public bool IsAtOrBefore(ResumePoint later, IKeyComparer? comparer)
    {
        ArgumentNullException.ThrowIfNull(later);
        if (!HasKey)
        {
            return true;
        }
        if (!later.HasKey)
        {
            return false;
        }
        int order = comparer?.Compare(Key, later.Key) ?? Key.AsSpan().SequenceCompareTo(later.Key);
        return order < 0 || (order == 0 && (later.Skip == SkipAll || (Skip != SkipAll && Skip <= later.Skip)));
    }

    /// <summary>
    /// Whether every complete record of <paramref name="records"/> has a key before the point's (or there is none): the
    /// records that follow them may still come before the point.
    /// </summary>
    public bool IsAfterAll(ReadOnlySpan<byte> records, IKeyComparer? comparer)
    {
        if (!HasKey)
        {
            return false;
        }
        ReadOnlySpan<byte> last = default;
        while (RecordCodec.TryParse(records, out var bounds) == RecordParseStatus.Complete)
        {
            last = records.Slice(bounds.KeyOffset, bounds.KeyLength);
            records = records[bounds.Length..];
        }
        return last.IsEmpty || (comparer?.Compare(last, Key) ?? last.SequenceCompareTo(Key)) < 0;
    }

    /// <summary>Whether the first record of <paramref name="records"/> comes before the point (so a copy from there covers it).</summary>
    public bool IsBefore(ReadOnlySpan<byte> records, IKeyComparer? comparer)
    {
        if (!HasKey || RecordCodec.TryParse(records, out var bounds) != RecordParseStatus.Complete)
        {
            return false;
        }
        var recordKey = records.Slice(bounds.KeyOffset, bounds.KeyLength);
        return (comparer?.Compare(recordKey, Key) ?? recordKey.SequenceCompareTo(Key)) < 0;
    }
}

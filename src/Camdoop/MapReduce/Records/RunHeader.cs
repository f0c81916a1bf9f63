using System.Buffers.Binary;
using Camdoop.Records;

namespace Camdoop.MapReduce.Records;

/// <summary>
/// Header of a run file: one map task's sorted (and, for associative jobs, combined) records of one
/// (reduce task, stripe). Layout, big-endian (the checksums too), 96 bytes:
/// <code>
///  0 u32 magic "CDRN"      4 u16 version (2)    6 u16 header length (96)
///  8 u64 job id           16 u64 map task id
/// 24 i32 reduce task      28 i32 stripe
/// 32 i64 record count     40 i64 payload bytes (the record stream after the header)
/// 48 i64 key bytes        56 i64 value bytes    (logical sizes)
/// 64 u64 xxHash64 of the payload                72 u32 flags (bit 0: combined)   76 u32 reserved (0)
/// 80 u64 reserved (0)     88 u64 xxHash64 of bytes 0..87
/// </code>
/// Version 1 was the same layout little-endian; it is refused with an error that says so.
/// </summary>
public readonly record struct RunHeader(
    ulong JobId,
    ulong MapTaskId,
    int ReduceTask,
    int Stripe,
    long RecordCount,
    long PayloadBytes,
    long KeyBytes,
    long ValueBytes,
    ulong PayloadChecksum,
    bool Combined)
{
    public const int Size = 96;
    public const uint Magic = 0x4344_524E; // "CDRN"
    public const ushort CurrentVersion = 2;

    /// <summary>Version 1, the little-endian layout of older builds, as its bytes read big-endian.</summary>
    private const ushort LittleEndianVersion1 = 0x0100;

    /// <summary>Key plus value bytes of all records.</summary>
    public long LogicalBytes => KeyBytes + ValueBytes;

    public void Write(Span<byte> destination)
    {
        var d = destination[..Size];
        d.Clear();
        BinaryPrimitives.WriteUInt32BigEndian(d, Magic);
        BinaryPrimitives.WriteUInt16BigEndian(d[4..], CurrentVersion);
        BinaryPrimitives.WriteUInt16BigEndian(d[6..], Size);
        BinaryPrimitives.WriteUInt64BigEndian(d[8..], JobId);
        BinaryPrimitives.WriteUInt64BigEndian(d[16..], MapTaskId);
        BinaryPrimitives.WriteInt32BigEndian(d[24..], ReduceTask);
        BinaryPrimitives.WriteInt32BigEndian(d[28..], Stripe);
        BinaryPrimitives.WriteInt64BigEndian(d[32..], RecordCount);
        BinaryPrimitives.WriteInt64BigEndian(d[40..], PayloadBytes);
        BinaryPrimitives.WriteInt64BigEndian(d[48..], KeyBytes);
        BinaryPrimitives.WriteInt64BigEndian(d[56..], ValueBytes);
        BinaryPrimitives.WriteUInt64BigEndian(d[64..], PayloadChecksum);
        BinaryPrimitives.WriteUInt32BigEndian(d[72..], Combined ? 1u : 0u);
        BinaryPrimitives.WriteUInt64BigEndian(d[88..], XxHash64.Hash(d[..88]));
    }

    /// <summary>Parses and validates a header; <paramref name="source"/> names the file in error messages.</summary>
    public static RunHeader Read(ReadOnlySpan<byte> bytes, string source)
    {
        if (bytes.Length < Size)
        {
            throw new CorruptRunFileException(source, $"only {bytes.Length} bytes, shorter than the {Size}-byte header");
        }
        var d = bytes[..Size];
        if (BinaryPrimitives.ReadUInt32BigEndian(d) != Magic)
        {
            throw new CorruptRunFileException(source, "not a run file (bad magic)");
        }
        ushort version = BinaryPrimitives.ReadUInt16BigEndian(d[4..]);
        if (version == LittleEndianVersion1)
        {
            throw new CorruptRunFileException(source,
                $"run file version 1 (the little-endian layout of an older build) is not supported: this build reads version {CurrentVersion}");
        }
        if (version != CurrentVersion || BinaryPrimitives.ReadUInt16BigEndian(d[6..]) != Size)
        {
            throw new CorruptRunFileException(source, $"unsupported run file version {version}: this build reads version {CurrentVersion}");
        }
        if (BinaryPrimitives.ReadUInt64BigEndian(d[88..]) != XxHash64.Hash(d[..88]))
        {
            throw new CorruptRunFileException(source, "header checksum mismatch");
        }
        if ((BinaryPrimitives.ReadUInt32BigEndian(d[72..]) & ~1u) != 0 || d[76..88].ContainsAnyExcept((byte)0))
        {
            throw new CorruptRunFileException(source, "unknown header flags or reserved bytes not zero");
        }
        var header = new RunHeader(
            BinaryPrimitives.ReadUInt64BigEndian(d[8..]),
            BinaryPrimitives.ReadUInt64BigEndian(d[16..]),
            BinaryPrimitives.ReadInt32BigEndian(d[24..]),
            BinaryPrimitives.ReadInt32BigEndian(d[28..]),
            BinaryPrimitives.ReadInt64BigEndian(d[32..]),
            BinaryPrimitives.ReadInt64BigEndian(d[40..]),
            BinaryPrimitives.ReadInt64BigEndian(d[48..]),
            BinaryPrimitives.ReadInt64BigEndian(d[56..]),
            BinaryPrimitives.ReadUInt64BigEndian(d[64..]),
            (BinaryPrimitives.ReadUInt32BigEndian(d[72..]) & 1) != 0);
        if (header.RecordCount < 0 || header.PayloadBytes < 0 || header.KeyBytes < 0 || header.ValueBytes < 0
            || header.Stripe is < 0 or >= Stripes.Count || header.ReduceTask < 0)
        {
            throw new CorruptRunFileException(source, "header fields out of range");
        }
        return header;
    }
}

using System.Buffers.Binary;
using Camdoop.MapReduce.Records;
using Camdoop.Records;
using Microsoft.Win32.SafeHandles;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// One map task's output file: the runs of every bucket (bucket = reduce task x 6 + stripe) back to back, each a
/// <see cref="RunHeader"/> followed by its record stream, then an index and a trailer. Big-endian:
/// <code>
/// [bucket 0: RunHeader (96) + payload] ... [bucket B-1: RunHeader + payload]
/// [index: B x i64 offset of each bucket's header]
/// [trailer, 40 bytes: u32 magic "CDIX" | u16 version (2) | u16 reserved (0) | i32 buckets | i32 reduce tasks |
///  i64 index offset | u64 xxHash64 of the index | u64 xxHash64 of trailer bytes 0..31]
/// </code>
/// Version 1 was the same layout little-endian; it is refused with an error that says so. The trailer comes last so
/// the file is written in one sequential pass. <see cref="Open"/> validates the trailer, the index and every segment
/// header before anything is read.
/// </summary>
public sealed class IndexedRunFile : IDisposable
{
    public const uint TrailerMagic = 0x4344_4958; // "CDIX"
    public const ushort Version = 2;
    public const int TrailerSize = 40;

    /// <summary>Version 1, the little-endian layout of older builds, as its bytes read big-endian.</summary>
    private const ushort LittleEndianVersion1 = 0x0100;

    private readonly long[] _offsets;
    private readonly RunHeader[] _headers;

    private IndexedRunFile(string path, SafeFileHandle handle, int reduceTasks, long[] offsets, RunHeader[] headers)
    {
        Path = path;
        Handle = handle;
        ReduceTasks = reduceTasks;
        _offsets = offsets;
        _headers = headers;
    }

    public string Path { get; }

    public int ReduceTasks { get; }

    public int Buckets => _headers.Length;

    /// <summary>Shared by every segment reader: positional reads, no per-reader file descriptor.</summary>
    internal SafeFileHandle Handle { get; }

    public RunHeader Header(int bucket) => _headers[bucket];

    /// <summary>File offset of the first payload byte of <paramref name="bucket"/>.</summary>
    public long PayloadOffset(int bucket) => _offsets[bucket] + RunHeader.Size;

    /// <summary>Opens and validates a run file (trailer, index, segment headers and lengths).</summary>
    public static IndexedRunFile Open(string path)
    {
        var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read);
        try
        {
            long length = RandomAccess.GetLength(handle);
            if (length < TrailerSize)
            {
                throw new CorruptRunFileException(path, $"only {length} bytes, shorter than the {TrailerSize}-byte trailer");
            }
            Span<byte> trailer = stackalloc byte[TrailerSize];
            ReadExactly(handle, trailer, length - TrailerSize, path);
            if (BinaryPrimitives.ReadUInt32BigEndian(trailer) != TrailerMagic)
            {
                throw new CorruptRunFileException(path, "not an indexed run file (bad trailer magic)");
            }
            // The version before the checksum: a file of another layout gets an error naming its version, not a
            // checksum mismatch.
            ushort version = BinaryPrimitives.ReadUInt16BigEndian(trailer[4..]);
            if (version == LittleEndianVersion1)
            {
                throw new CorruptRunFileException(path,
                    $"indexed run file version 1 (the little-endian layout of an older build) is not supported: this build reads version {Version}");
            }
            if (version != Version)
            {
                throw new CorruptRunFileException(path, $"unsupported indexed run file version {version}: this build reads version {Version}");
            }
            if (BinaryPrimitives.ReadUInt64BigEndian(trailer[32..]) != XxHash64.Hash(trailer[..32]))
            {
                throw new CorruptRunFileException(path, "trailer checksum mismatch");
            }
            if (BinaryPrimitives.ReadUInt16BigEndian(trailer[6..]) != 0)
            {
                throw new CorruptRunFileException(path, "trailer reserved bytes are not zero");
            }
            int buckets = BinaryPrimitives.ReadInt32BigEndian(trailer[8..]);
            int reduceTasks = BinaryPrimitives.ReadInt32BigEndian(trailer[12..]);
            long indexOffset = BinaryPrimitives.ReadInt64BigEndian(trailer[16..]);
            if (reduceTasks < 1 || buckets != reduceTasks * Stripes.Count
                || indexOffset < 0 || indexOffset + (8L * buckets) + TrailerSize != length)
            {
                throw new CorruptRunFileException(path, "trailer fields out of range");
            }
            var index = new byte[8 * buckets];
            ReadExactly(handle, index, indexOffset, path);
            if (XxHash64.Hash(index) != BinaryPrimitives.ReadUInt64BigEndian(trailer[24..]))
            {
                throw new CorruptRunFileException(path, "index checksum mismatch");
            }
            var offsets = new long[buckets];
            var headers = new RunHeader[buckets];
            Span<byte> headerBytes = stackalloc byte[RunHeader.Size];
            long expected = 0;
            for (int b = 0; b < buckets; b++)
            {
                offsets[b] = BinaryPrimitives.ReadInt64BigEndian(index.AsSpan(8 * b));
                if (offsets[b] != expected)
                {
                    throw new CorruptRunFileException(path, $"index entry {b} points at {offsets[b]}, expected {expected}");
                }
                ReadExactly(handle, headerBytes, offsets[b], path);
                var header = RunHeader.Read(headerBytes, path);
                if (header.ReduceTask != b / Stripes.Count || header.Stripe != b % Stripes.Count)
                {
                    throw new CorruptRunFileException(path, $"segment {b} is labelled ({header.ReduceTask}, {header.Stripe})");
                }
                headers[b] = header;
                expected = offsets[b] + RunHeader.Size + header.PayloadBytes;
                if (expected > indexOffset)
                {
                    throw new CorruptRunFileException(path, $"segment {b} runs past the index");
                }
            }
            if (expected != indexOffset)
            {
                throw new CorruptRunFileException(path, "bytes between the last segment and the index");
            }
            return new IndexedRunFile(path, handle, reduceTasks, offsets, headers);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <summary>A reader over the record stream of <paramref name="bucket"/>.</summary>
    public RunSegmentReader OpenSegment(int bucket) => RunSegmentReader.FromFile(this, bucket);

    public void Dispose() => Handle.Dispose();

    internal static void ReadExactly(SafeFileHandle handle, Span<byte> destination, long offset, string path)
    {
        int done = 0;
        while (done < destination.Length)
        {
            int read = RandomAccess.Read(handle, destination[done..], offset + done);
            if (read == 0)
            {
                throw new CorruptRunFileException(path, "file was truncated while reading");
            }
            done += read;
        }
    }
}

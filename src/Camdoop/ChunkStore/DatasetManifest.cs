using System.Buffers.Binary;
using System.Text;
using Camdoop.KeyRouting;
using Camdoop.Records;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>One chunk of a dataset, as its manifest lists it.</summary>
public sealed record ManifestChunk(Key Id, long Length, ulong Checksum);

/// <summary>
/// A dataset: its name, record format, total size, and the ordered list of its chunks (id, length, checksum).
/// Stored in the chunk store itself as a <see cref="ChunkKind.Manifest"/> chunk under
/// <see cref="ChunkPlacement.ManifestId"/>, replicated like any chunk. Encoded in a fixed binary layout (big-endian,
/// like every frame of the cube), checked field by field like any untrusted input:
/// <code>
/// u32 magic "CDMF" | u8 version (1) | u8 format (0 text, 1 fixed-size records) | u16 name length |
/// u32 record size | u64 total bytes | i64 created (Unix ms) | u32 chunk count | name (UTF-8) |
/// chunk count x [20-byte id | u64 length | u64 checksum]
/// </code>
/// </summary>
public sealed record DatasetManifest
{
    /// <summary>Most chunks a dataset may have (a manifest stays a few MB).</summary>
    public const int MaxChunks = 100_000;

    private const uint Magic = 0x43444D46; // "CDMF"
    private const byte Version = 1;
    private const int HeaderSize = 4 + 1 + 1 + 2 + 4 + 8 + 8 + 4;
    private const int ChunkEntrySize = Key.Size + 8 + 8;

    public required string Name { get; init; }

    public DatasetFormat Format { get; init; }

    public int RecordSize { get; init; }

    public required long TotalBytes { get; init; }

    public long CreatedUnixMs { get; init; }

    public required IReadOnlyList<ManifestChunk> Chunks { get; init; }

    /// <summary>"text" or "records&lt;size&gt;".</summary>
    public string FormatName => Format == DatasetFormat.Text ? "text" : FormattableString.Invariant($"records{RecordSize}");

    public byte[] Encode()
    {
        var name = Encoding.UTF8.GetBytes(Name);
        if (name.Length > ushort.MaxValue)
        {
            throw new ArgumentException("dataset name too long");
        }
        var bytes = new byte[HeaderSize + name.Length + (Chunks.Count * ChunkEntrySize)];
        var span = bytes.AsSpan();
        BinaryPrimitives.WriteUInt32BigEndian(span, Magic);
        span[4] = Version;
        span[5] = (byte)Format;
        BinaryPrimitives.WriteUInt16BigEndian(span[6..], (ushort)name.Length);
        BinaryPrimitives.WriteUInt32BigEndian(span[8..], (uint)RecordSize);
        BinaryPrimitives.WriteInt64BigEndian(span[12..], TotalBytes);
        BinaryPrimitives.WriteInt64BigEndian(span[20..], CreatedUnixMs);
        BinaryPrimitives.WriteUInt32BigEndian(span[28..], (uint)Chunks.Count);
        name.CopyTo(span[HeaderSize..]);
        int p = HeaderSize + name.Length;
        foreach (var chunk in Chunks)
        {
            chunk.Id.Write(span[p..]);
            BinaryPrimitives.WriteInt64BigEndian(span[(p + Key.Size)..], chunk.Length);
            BinaryPrimitives.WriteUInt64BigEndian(span[(p + Key.Size + 8)..], chunk.Checksum);
            p += ChunkEntrySize;
        }
        return bytes;
    }

    /// <summary>Decodes and validates a manifest; <see cref="InvalidDataException"/> when it is not one.</summary>
    public static DatasetManifest Decode(ReadOnlyMemory<byte> bytes)
    {
        var span = bytes.Span;
        if (span.Length < HeaderSize || BinaryPrimitives.ReadUInt32BigEndian(span) != Magic || span[4] != Version)
        {
            throw new InvalidDataException("malformed dataset manifest: not a version 1 manifest");
        }
        byte format = span[5];
        int nameLength = BinaryPrimitives.ReadUInt16BigEndian(span[6..]);
        uint recordSize = BinaryPrimitives.ReadUInt32BigEndian(span[8..]);
        long total = BinaryPrimitives.ReadInt64BigEndian(span[12..]);
        long created = BinaryPrimitives.ReadInt64BigEndian(span[20..]);
        uint count = BinaryPrimitives.ReadUInt32BigEndian(span[28..]);
        if (count > MaxChunks)
        {
            throw new InvalidDataException($"manifest lists {count} chunks, more than {MaxChunks}");
        }
        if (span.Length != HeaderSize + nameLength + ((long)count * ChunkEntrySize))
        {
            throw new InvalidDataException("malformed dataset manifest: its length does not match its chunk count");
        }
        string name;
        try
        {
            name = new UTF8Encoding(false, true).GetString(span.Slice(HeaderSize, nameLength));
        }
        catch (DecoderFallbackException e)
        {
            throw new InvalidDataException("malformed dataset manifest: the name is not UTF-8", e);
        }
        var chunks = new ManifestChunk[count];
        int p = HeaderSize + nameLength;
        long sum = 0;
        for (int i = 0; i < chunks.Length; i++)
        {
            var id = Key.Read(span[p..]);
            long length = BinaryPrimitives.ReadInt64BigEndian(span[(p + Key.Size)..]);
            ulong checksum = BinaryPrimitives.ReadUInt64BigEndian(span[(p + Key.Size + 8)..]);
            if (length < 0 || length > ChunkMeta.MaxChunkBytes)
            {
                throw new InvalidDataException($"malformed dataset manifest: chunk length {length} is out of range");
            }
            sum += length;
            chunks[i] = new ManifestChunk(id, length, checksum);
            p += ChunkEntrySize;
        }
        if (format > 1 || !ChunkMeta.IsValidName(name) || total != sum || recordSize > InputFormatLimits.MaxRecordBytes
            || (format == 1 && recordSize == 0))
        {
            throw new InvalidDataException("malformed dataset manifest");
        }
        return new DatasetManifest
        {
            Name = name,
            Format = (DatasetFormat)format,
            RecordSize = (int)recordSize,
            TotalBytes = total,
            CreatedUnixMs = created,
            Chunks = chunks,
        };
    }

    /// <summary>
    /// A dataset held whole in memory, one chunk per input (chunk i at index i), with its manifest: what to write to a
    /// chunk store, chunks first, when the data is not uploaded through a front-end.
    /// </summary>
    public static (DatasetManifest Manifest, IReadOnlyList<(ChunkMeta Meta, byte[] Bytes)> Chunks) FromInputs(
        Torus torus, string name, IReadOnlyList<byte[]> inputs, DatasetFormat format = DatasetFormat.Text, int recordSize = 0, ulong nonce = 0)
    {
        ArgumentNullException.ThrowIfNull(inputs);
        long total = inputs.Sum(x => (long)x.Length);
        var chunks = inputs.Select((bytes, i) => (new ChunkMeta
        {
            Id = ChunkPlacement.ChunkId(torus, name, i, nonce),
            Length = bytes.Length,
            Checksum = XxHash64.Hash(bytes),
            Dataset = name,
            Index = i,
            Count = inputs.Count,
            DatasetBytes = total,
            Format = format,
            RecordSize = recordSize,
        }, bytes)).ToList();
        var manifest = new DatasetManifest
        {
            Name = name,
            Format = format,
            RecordSize = recordSize,
            TotalBytes = total,
            Chunks = chunks.Select(c => new ManifestChunk(c.Item1.Id, c.Item1.Length, c.Item1.Checksum)).ToList(),
        };
        return (manifest, chunks);
    }

    /// <summary>The manifest as a chunk: its metadata carries the dataset summary that listings show.</summary>
    public (ChunkMeta Meta, byte[] Bytes) ToChunk()
    {
        var bytes = Encode();
        var meta = new ChunkMeta
        {
            Id = ChunkPlacement.ManifestId(Name),
            Kind = ChunkKind.Manifest,
            Length = bytes.Length,
            Checksum = XxHash64.Hash(bytes),
            Dataset = Name,
            Count = Chunks.Count,
            DatasetBytes = TotalBytes,
            Format = Format,
            RecordSize = RecordSize,
        };
        return (meta, bytes);
    }
}

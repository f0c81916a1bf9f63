using System.Buffers;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.FrontEnd.Wire;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.ChunkStore;

/// <summary>One chunk of a dataset, as its manifest lists it.</summary>
public sealed record ManifestChunk(Key Id, long Length, ulong Checksum);

/// <summary>
/// A dataset: its name, record format, total size, and the ordered list of its chunks (id, length, checksum).
/// Stored in the chunk store itself as a <see cref="ChunkKind.Manifest"/> chunk under
/// <see cref="ChunkPlacement.ManifestId"/>, replicated like any chunk. Encoded as a MessagePack map.
/// </summary>
public sealed record DatasetManifest
{
    /// <summary>Most chunks a dataset may have (a manifest stays a few MB).</summary>
    public const int MaxChunks = 100_000;

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
        var buffer = new ArrayBufferWriter<byte>(256 + (Chunks.Count * 40));
        var w = new MessagePackWriter(buffer);
        w.WriteMapHeader(6);
        w.Write("name");
        w.Write(Name);
        w.Write("format");
        w.Write((long)Format);
        w.Write("recordSize");
        w.Write((long)RecordSize);
        w.Write("totalBytes");
        w.Write(TotalBytes);
        w.Write("created");
        w.Write(CreatedUnixMs);
        w.Write("chunks");
        w.WriteArrayHeader(Chunks.Count);
        Span<byte> key = stackalloc byte[Key.Size];
        foreach (var c in Chunks)
        {
            w.WriteArrayHeader(3);
            c.Id.Write(key);
            w.WriteBinary(key);
            w.Write(c.Length);
            w.Write(c.Checksum);
        }
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>Decodes and validates a manifest; <see cref="InvalidDataException"/> when it is not one.</summary>
    public static DatasetManifest Decode(ReadOnlySpan<byte> bytes)
    {
        var r = new MessagePackReader(bytes);
        string? name = null;
        long format = -1, recordSize = 0, total = -1, created = 0;
        List<ManifestChunk>? chunks = null;
        int fields = r.ReadMapHeader();
        for (int i = 0; i < fields; i++)
        {
            switch (r.ReadString())
            {
                case "name":
                    name = r.ReadString();
                    break;
                case "format":
                    format = r.ReadInt64();
                    break;
                case "recordSize":
                    recordSize = r.ReadInt64();
                    break;
                case "totalBytes":
                    total = r.ReadInt64();
                    break;
                case "created":
                    created = r.ReadInt64();
                    break;
                case "chunks":
                    int n = r.ReadArrayHeader();
                    if (n > MaxChunks)
                    {
                        throw new InvalidDataException($"manifest lists {n} chunks, more than {MaxChunks}");
                    }
                    chunks = new List<ManifestChunk>(n);
                    for (int c = 0; c < n; c++)
                    {
                        if (r.ReadArrayHeader() != 3)
                        {
                            throw new InvalidDataException("a manifest chunk entry is not [id, length, checksum]");
                        }
                        var id = r.ReadBinary();
                        if (id.Length != Key.Size)
                        {
                            throw new InvalidDataException("a manifest chunk id is not 20 bytes");
                        }
                        long length = r.ReadInt64();
                        ulong checksum = ReadUInt64(ref r);
                        if (length < 0 || length > ChunkMeta.MaxChunkBytes)
                        {
                            throw new InvalidDataException($"a manifest chunk length {length} is out of range");
                        }
                        chunks.Add(new ManifestChunk(Key.Read(id), length, checksum));
                    }
                    break;
                default:
                    r.Skip();
                    break;
            }
        }
        if (!r.End || name is null || !ChunkMeta.IsValidName(name) || format is not (0 or 1) || chunks is null || total != chunks.Sum(c => c.Length)
            || recordSize < 0 || recordSize > InputFormatLimits.MaxRecordBytes || (format == 1 && recordSize == 0))
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

    private static ulong ReadUInt64(ref MessagePackReader r) => r.ReadUInt64();
}

/// <summary>Limits on records of fixed-size datasets.</summary>
public static class InputFormatLimits
{
    public const int MaxRecordBytes = Jobs.InputFormat.MaxLineBytes;
}

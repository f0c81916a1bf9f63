using System.Buffers;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.FrontEnd.Wire;
using Camdoop.MapReduce.Records;
using MessagePack;
using MessagePack.Formatters;

namespace Camdoop.MapReduce.ChunkStore;

/// <summary>One chunk of a dataset, as its manifest lists it: on the wire the array [id (bin 20), length, checksum].</summary>
[MessagePackFormatter(typeof(ManifestChunkFormatter))]
public sealed record ManifestChunk(Key Id, long Length, ulong Checksum);

/// <summary>
/// A dataset: its name, record format, total size, and the ordered list of its chunks (id, length, checksum).
/// Stored in the chunk store itself as a <see cref="ChunkKind.Manifest"/> chunk under
/// <see cref="ChunkPlacement.ManifestId"/>, replicated like any chunk. Encoded as a MessagePack map
/// (<see cref="DatasetManifestWire"/>), checked like any untrusted message.
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

    public byte[] Encode() => FrontEndWire.Serialize(new DatasetManifestWire
    {
        Name = Name,
        Format = (long)Format,
        RecordSize = RecordSize,
        TotalBytes = TotalBytes,
        Created = CreatedUnixMs,
        Chunks = Chunks,
    });

    /// <summary>Decodes and validates a manifest; <see cref="InvalidDataException"/> when it is not one.</summary>
    public static DatasetManifest Decode(ReadOnlyMemory<byte> bytes)
    {
        var body = new ReadOnlySequence<byte>(bytes);
        WireValidator.Validate(body);
        DatasetManifestWire wire;
        try
        {
            wire = MessagePackSerializer.Deserialize<DatasetManifestWire>(body, FrontEndWire.Options);
        }
        catch (MessagePackSerializationException e)
        {
            throw new InvalidDataException($"malformed dataset manifest: {(e.InnerException ?? e).Message}", e);
        }
        if (wire.Chunks is { Count: > MaxChunks })
        {
            throw new InvalidDataException($"manifest lists {wire.Chunks.Count} chunks, more than {MaxChunks}");
        }
        if (wire is not { Name: { } name, Format: 0 or 1, Chunks: { } chunks, TotalBytes: { } total } || !ChunkMeta.IsValidName(name)
            || total != chunks.Sum(c => c.Length) || wire.RecordSize < 0 || wire.RecordSize > InputFormatLimits.MaxRecordBytes
            || (wire.Format == 1 && wire.RecordSize == 0))
        {
            throw new InvalidDataException("malformed dataset manifest");
        }
        return new DatasetManifest
        {
            Name = name,
            Format = (DatasetFormat)wire.Format,
            RecordSize = (int)wire.RecordSize,
            TotalBytes = total,
            CreatedUnixMs = wire.Created,
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
}

/// <summary>A manifest as stored: a map with string keys (unknown keys are skipped, missing ones are an error).</summary>
[MessagePackObject]
public sealed class DatasetManifestWire
{
    [Key("name")]
    public string? Name { get; set; }

    /// <summary>0 text, 1 fixed-size records.</summary>
    [Key("format")]
    public long? Format { get; set; }

    [Key("recordSize")]
    public long RecordSize { get; set; }

    [Key("totalBytes")]
    public long? TotalBytes { get; set; }

    /// <summary>Unix time in milliseconds.</summary>
    [Key("created")]
    public long Created { get; set; }

    [Key("chunks")]
    public IReadOnlyList<ManifestChunk>? Chunks { get; set; }
}

/// <summary>A manifest chunk as exactly [id (bin 20), length (0..max chunk size), checksum (uint64)].</summary>
public sealed class ManifestChunkFormatter : IMessagePackFormatter<ManifestChunk>
{
    public void Serialize(ref MessagePackWriter writer, ManifestChunk value, MessagePackSerializerOptions options)
    {
        ArgumentNullException.ThrowIfNull(value);
        writer.WriteArrayHeader(3);
        writer.WriteBinHeader(Key.Size);
        value.Id.Write(writer.GetSpan(Key.Size));
        writer.Advance(Key.Size);
        writer.Write(value.Length);
        writer.Write(value.Checksum);
    }

    public ManifestChunk Deserialize(ref MessagePackReader reader, MessagePackSerializerOptions options)
    {
        if (reader.ReadArrayHeader() != 3)
        {
            throw new MessagePackSerializationException("a manifest chunk entry is not [id, length, checksum]");
        }
        var id = reader.ReadBytes();
        if (id is not { Length: Key.Size } bytes)
        {
            throw new MessagePackSerializationException("a manifest chunk id is not 20 bytes");
        }
        Span<byte> key = stackalloc byte[Key.Size];
        bytes.CopyTo(key);
        long length = reader.ReadInt64();
        ulong checksum = reader.ReadUInt64();
        if (length < 0 || length > ChunkMeta.MaxChunkBytes)
        {
            throw new MessagePackSerializationException($"a manifest chunk length {length} is out of range");
        }
        return new ManifestChunk(Key.Read(key), length, checksum);
    }
}

/// <summary>Limits on records of fixed-size datasets.</summary>
public static class InputFormatLimits
{
    public const int MaxRecordBytes = Jobs.InputFormat.MaxLineBytes;
}

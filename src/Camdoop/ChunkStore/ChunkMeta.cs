using System.Buffers.Binary;
using System.Text;
using System.Text.Unicode;
using Camdoop.KeyRouting;

namespace Camdoop.ChunkStore;

public enum ChunkKind : byte
{
    /// <summary>A piece of a dataset's input.</summary>
    Data = 0,

    /// <summary>A dataset's manifest (name, format, chunk list).</summary>
    Manifest = 1,
}

/// <summary>How a dataset's bytes split into records (records are never split across chunks).</summary>
public enum DatasetFormat : byte
{
    /// <summary>'\n'-terminated lines.</summary>
    Text = 0,

    /// <summary>Fixed-size binary records (e.g. 100-byte sort records).</summary>
    Records = 1,
}

/// <summary>
/// What a server knows of a stored chunk besides its bytes: identity, kind, its dataset (name, index, chunk count,
/// total bytes, format) and the length and xxHash64 of the bytes. Travels in transfer offers and is kept next to
/// each replica (the .meta file), so a server can find the chunks of a dataset it stores and check them.
/// <code>
/// key (20) | kind (1) | length (8) | checksum (8) | index (4) | count (4) | dataset bytes (8) | format (1)
/// | record size (4) | dataset name length (1) | name (UTF-8, 1..MaxNameBytes)
/// </code>
/// </summary>
public sealed record ChunkMeta
{
    public const int MaxNameBytes = 200;
    public const int FixedSize = Key.Size + 1 + 8 + 8 + 4 + 4 + 8 + 1 + 4 + 1;
    public const int MaxSize = FixedSize + MaxNameBytes;

    /// <summary>Largest chunk the store accepts (1 GiB).</summary>
    public const long MaxChunkBytes = 1L << 30;

    public required Key Id { get; init; }

    public ChunkKind Kind { get; init; }

    public required long Length { get; init; }

    /// <summary>xxHash64 (seed 0) of the chunk's bytes.</summary>
    public required ulong Checksum { get; init; }

    public required string Dataset { get; init; }

    /// <summary>Position of the chunk in its dataset (0 for a manifest).</summary>
    public int Index { get; init; }

    /// <summary>Chunks in the dataset.</summary>
    public int Count { get; init; }

    public long DatasetBytes { get; init; }

    public DatasetFormat Format { get; init; }

    /// <summary>Record size for <see cref="DatasetFormat.Records"/>, else 0.</summary>
    public int RecordSize { get; init; }

    /// <summary>Whether <paramref name="name"/> may name a dataset: 1-200 bytes of letters, digits, '.', '_', '-'.</summary>
    public static bool IsValidName(string? name) =>
        name is { Length: > 0 and <= MaxNameBytes } && name[0] != '.' && name.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '_' or '-');

    public int Write(Span<byte> destination)
    {
        int nameLength = Encoding.UTF8.GetByteCount(Dataset);
        if (nameLength is 0 or > MaxNameBytes)
        {
            throw new ArgumentException($"dataset name must be 1 to {MaxNameBytes} bytes");
        }
        if (destination.Length < FixedSize + nameLength)
        {
            throw new ArgumentException("destination too small for chunk metadata", nameof(destination));
        }
        Id.Write(destination);
        int p = Key.Size;
        destination[p++] = (byte)Kind;
        BinaryPrimitives.WriteInt64BigEndian(destination[p..], Length);
        p += 8;
        BinaryPrimitives.WriteUInt64BigEndian(destination[p..], Checksum);
        p += 8;
        BinaryPrimitives.WriteInt32BigEndian(destination[p..], Index);
        p += 4;
        BinaryPrimitives.WriteInt32BigEndian(destination[p..], Count);
        p += 4;
        BinaryPrimitives.WriteInt64BigEndian(destination[p..], DatasetBytes);
        p += 8;
        destination[p++] = (byte)Format;
        BinaryPrimitives.WriteInt32BigEndian(destination[p..], RecordSize);
        p += 4;
        destination[p++] = (byte)nameLength;
        Encoding.UTF8.GetBytes(Dataset, destination[p..]);
        return p + nameLength;
    }

    public byte[] ToBytes()
    {
        var buffer = new byte[MaxSize];
        return buffer[..Write(buffer)];
    }

    /// <summary>Reads and validates metadata; false (never an exception) on malformed bytes.</summary>
    public static bool TryRead(ReadOnlySpan<byte> source, out ChunkMeta? meta, out int consumed)
    {
        meta = null;
        consumed = 0;
        if (source.Length < FixedSize)
        {
            return false;
        }
        var id = Key.Read(source);
        int p = Key.Size;
        var kind = (ChunkKind)source[p++];
        long length = BinaryPrimitives.ReadInt64BigEndian(source[p..]);
        p += 8;
        ulong checksum = BinaryPrimitives.ReadUInt64BigEndian(source[p..]);
        p += 8;
        int index = BinaryPrimitives.ReadInt32BigEndian(source[p..]);
        p += 4;
        int count = BinaryPrimitives.ReadInt32BigEndian(source[p..]);
        p += 4;
        long datasetBytes = BinaryPrimitives.ReadInt64BigEndian(source[p..]);
        p += 8;
        var format = (DatasetFormat)source[p++];
        int recordSize = BinaryPrimitives.ReadInt32BigEndian(source[p..]);
        p += 4;
        int nameLength = source[p++];
        if (kind is not (ChunkKind.Data or ChunkKind.Manifest) || format is not (DatasetFormat.Text or DatasetFormat.Records)
            || length < 0 || length > MaxChunkBytes || index < 0 || count < 0 || (kind == ChunkKind.Data && index >= count)
            || datasetBytes < 0 || recordSize < 0 || nameLength == 0 || nameLength > MaxNameBytes || source.Length - p < nameLength)
        {
            return false;
        }
        var nameBytes = source.Slice(p, nameLength);
        if (!Utf8.IsValid(nameBytes))
        {
            return false;
        }
        string name = Encoding.UTF8.GetString(nameBytes);
        if (!IsValidName(name))
        {
            return false;
        }
        consumed = p + nameLength;
        meta = new ChunkMeta
        {
            Id = id,
            Kind = kind,
            Length = length,
            Checksum = checksum,
            Dataset = name,
            Index = index,
            Count = count,
            DatasetBytes = datasetBytes,
            Format = format,
            RecordSize = recordSize,
        };
        return true;
    }
}

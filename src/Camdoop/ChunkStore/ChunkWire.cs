using System.Buffers.Binary;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;

namespace Camdoop.ChunkStore;

public enum ChunkMessage : byte
{
    /// <summary>Sender to receiver: id | purpose | chunk metadata. Starts (or re-asks about) a transfer.</summary>
    Offer = 1,

    /// <summary>Receiver to sender: id | <see cref="OfferStatus"/> | window (4).</summary>
    OfferReply = 2,

    /// <summary>Sender to receiver: id | offset (8) | bytes.</summary>
    Data = 3,

    /// <summary>Receiver to sender: id | next expected offset (8) | window (4). Cumulative.</summary>
    Ack = 4,

    /// <summary>Receiver to sender: id | <see cref="DoneStatus"/>. The transfer is over.</summary>
    Done = 5,

    /// <summary>Reader to holder: id | chunk id (20). The holder answers with an Offer of purpose ReadResponse, or a ReadReply.</summary>
    ReadRequest = 6,

    /// <summary>Holder to reader: id | <see cref="ReadStatus"/>. Only when the holder cannot serve the read.</summary>
    ReadReply = 7,

    /// <summary>Lister to server: id | skip (2). Asks for the manifests the server stores.</summary>
    ListRequest = 8,

    /// <summary>Server to lister: id | more (1) | count (2) | count x manifest metadata.</summary>
    ListReply = 9,

    /// <summary>
    /// Reader to server: id | path (2 + UTF-8). Reads a job output file under the server's data directory (not a
    /// replicated chunk); answered like a ReadRequest.
    /// </summary>
    FileRequest = 10,

    /// <summary>
    /// Deleter to server: id | name (2 + UTF-8). Deletes every replica of the dataset the server holds (its manifest
    /// and its data chunks, files included); answered with a DeleteReply once the files are gone.
    /// </summary>
    DeleteRequest = 11,

    /// <summary>Server to deleter: id | replicas deleted (4) | their bytes (8).</summary>
    DeleteReply = 12,

    /// <summary>
    /// Lister to server (fsck): id | from the start (1) | after chunk id (20) | name (2 + UTF-8; empty: every
    /// dataset). Asks which replicas the server holds, in chunk id order, after the given id.
    /// </summary>
    ReplicaRequest = 13,

    /// <summary>Server to lister: id | more (1) | count (2) | count x [chunk id (20) | <see cref="ReplicaState"/> (1)].</summary>
    ReplicaReply = 14,

    /// <summary>
    /// A server that started to every other: id (0). It may be back with an empty disk, so what it was known to hold
    /// is asked again (re-replication).
    /// </summary>
    Joined = 15,

    /// <summary>
    /// A server that holds a tombstone to one that has not applied it (or offered a removed replica): id (0) | one
    /// part of the tombstone (<see cref="TombstoneWire"/>). The receiver drops the replicas it names.
    /// </summary>
    Tombstone = 16,

    /// <summary>Answer to a <see cref="Tombstone"/> part: id (0) | manifest checksum | part | name.</summary>
    TombstoneApplied = 17,

    /// <summary>
    /// Decommissioner to server: id | decommission (1) or recommission (0) | count (2) | server indices (2 each).
    /// Answered with a <see cref="DecommissionReply"/> once applied.
    /// </summary>
    DecommissionRequest = 18,

    /// <summary>Answer to a <see cref="DecommissionRequest"/>: id.</summary>
    DecommissionReply = 19,
}

public enum TransferPurpose : byte
{
    /// <summary>Store a replica (put).</summary>
    Store = 0,

    /// <summary>Replace a corrupt or missing replica with good bytes.</summary>
    Repair = 1,

    /// <summary>The answer to a ReadRequest: the reader keeps the bytes in memory.</summary>
    ReadResponse = 2,
}

public enum OfferStatus : byte
{
    Accepted = 0,

    /// <summary>The receiver already holds a good replica with that checksum: nothing to send.</summary>
    AlreadyStored = 1,

    /// <summary>Too many transfers at the receiver; offer again later.</summary>
    Busy = 2,

    /// <summary>The receiver will not take it (no read pending for a ReadResponse, disk error, ...).</summary>
    Refused = 3,

    /// <summary>The receiver's disk has no room for the chunk.</summary>
    DiskFull = 4,

    /// <summary>The chunk belongs to a removed dataset (the receiver holds its tombstone and sends it along).</summary>
    Removed = 5,
}

public enum DoneStatus : byte
{
    Stored = 0,
    ChecksumMismatch = 1,
    StorageError = 2,

    /// <summary>The receiver knows no such transfer (it restarted): the sender starts over with an Offer.</summary>
    UnknownTransfer = 3,

    /// <summary>The receiver's disk filled up while it wrote or flushed the chunk: nothing was stored.</summary>
    DiskFull = 4,
}

public enum ReadStatus : byte
{
    Missing = 1,
    Corrupt = 2,
    Busy = 3,
}

/// <summary>
/// Encoding of the chunk store's frames (payload of service <see cref="Runtime.Node.WellKnownServices.ChunkStore"/>,
/// coordinate-routed). Big-endian; every reader checks lengths and enum values and returns false on anything
/// malformed.
/// </summary>
public static class ChunkWire
{
    public const int IdOffset = 1;
    public const int HeaderSize = 1 + 8;
    public const int DataHeaderSize = HeaderSize + 8;

    /// <summary>Chunk bytes per data frame: a jumbo frame's coordinate-routed payload less the data header.</summary>
    public const int MaxDataBytes = FrameLayout.MaxPayload - DataHeaderSize;

    public static bool TryReadHeader(ReadOnlySpan<byte> payload, out ChunkMessage kind, out ulong id)
    {
        kind = 0;
        id = 0;
        if (payload.Length < HeaderSize || payload[0] is 0 or > (byte)ChunkMessage.DecommissionReply)
        {
            return false;
        }
        kind = (ChunkMessage)payload[0];
        id = BinaryPrimitives.ReadUInt64BigEndian(payload[IdOffset..]);
        return true;
    }

    public static int WriteHeader(Span<byte> destination, ChunkMessage kind, ulong id)
    {
        destination[0] = (byte)kind;
        BinaryPrimitives.WriteUInt64BigEndian(destination[IdOffset..], id);
        return HeaderSize;
    }

    public static int WriteOffer(Span<byte> destination, ulong id, TransferPurpose purpose, ChunkMeta meta)
    {
        int p = WriteHeader(destination, ChunkMessage.Offer, id);
        destination[p++] = (byte)purpose;
        return p + meta.Write(destination[p..]);
    }

    public static bool TryReadOffer(ReadOnlySpan<byte> payload, out TransferPurpose purpose, out ChunkMeta? meta)
    {
        meta = null;
        purpose = 0;
        if (payload.Length < HeaderSize + 1 || payload[HeaderSize] > (byte)TransferPurpose.ReadResponse)
        {
            return false;
        }
        purpose = (TransferPurpose)payload[HeaderSize];
        return ChunkMeta.TryRead(payload[(HeaderSize + 1)..], out meta, out int used) && HeaderSize + 1 + used == payload.Length;
    }

    public static int WriteOfferReply(Span<byte> destination, ulong id, OfferStatus status, int window)
    {
        int p = WriteHeader(destination, ChunkMessage.OfferReply, id);
        destination[p++] = (byte)status;
        BinaryPrimitives.WriteInt32BigEndian(destination[p..], window);
        return p + 4;
    }

    public static bool TryReadOfferReply(ReadOnlySpan<byte> payload, out OfferStatus status, out int window)
    {
        status = 0;
        window = 0;
        if (payload.Length != HeaderSize + 5 || payload[HeaderSize] > (byte)OfferStatus.Removed)
        {
            return false;
        }
        status = (OfferStatus)payload[HeaderSize];
        window = BinaryPrimitives.ReadInt32BigEndian(payload[(HeaderSize + 1)..]);
        return window >= 0;
    }

    public static int WriteDataHeader(Span<byte> destination, ulong id, long offset)
    {
        int p = WriteHeader(destination, ChunkMessage.Data, id);
        BinaryPrimitives.WriteInt64BigEndian(destination[p..], offset);
        return DataHeaderSize;
    }

    public static bool TryReadData(ReadOnlySpan<byte> payload, out long offset, out ReadOnlySpan<byte> bytes)
    {
        offset = 0;
        bytes = default;
        if (payload.Length < DataHeaderSize)
        {
            return false;
        }
        offset = BinaryPrimitives.ReadInt64BigEndian(payload[HeaderSize..]);
        bytes = payload[DataHeaderSize..];
        return offset >= 0;
    }

    public static int WriteAck(Span<byte> destination, ulong id, long next, int window)
    {
        int p = WriteHeader(destination, ChunkMessage.Ack, id);
        BinaryPrimitives.WriteInt64BigEndian(destination[p..], next);
        BinaryPrimitives.WriteInt32BigEndian(destination[(p + 8)..], window);
        return p + 12;
    }

    public static bool TryReadAck(ReadOnlySpan<byte> payload, out long next, out int window)
    {
        next = 0;
        window = 0;
        if (payload.Length != HeaderSize + 12)
        {
            return false;
        }
        next = BinaryPrimitives.ReadInt64BigEndian(payload[HeaderSize..]);
        window = BinaryPrimitives.ReadInt32BigEndian(payload[(HeaderSize + 8)..]);
        return next >= 0 && window >= 0;
    }

    public static int WriteStatus(Span<byte> destination, ChunkMessage kind, ulong id, byte status)
    {
        int p = WriteHeader(destination, kind, id);
        destination[p] = status;
        return p + 1;
    }

    public static bool TryReadStatus(ReadOnlySpan<byte> payload, byte max, out byte status)
    {
        status = 0;
        if (payload.Length != HeaderSize + 1 || payload[HeaderSize] > max)
        {
            return false;
        }
        status = payload[HeaderSize];
        return true;
    }

    public static int WriteReadRequest(Span<byte> destination, ulong id, in Key chunk)
    {
        int p = WriteHeader(destination, ChunkMessage.ReadRequest, id);
        chunk.Write(destination[p..]);
        return p + Key.Size;
    }

    public static bool TryReadReadRequest(ReadOnlySpan<byte> payload, out Key chunk)
    {
        chunk = default;
        if (payload.Length != HeaderSize + Key.Size)
        {
            return false;
        }
        chunk = Key.Read(payload[HeaderSize..]);
        return true;
    }

    public static int WriteFileRequest(Span<byte> destination, ulong id, string path)
    {
        int p = WriteHeader(destination, ChunkMessage.FileRequest, id);
        int n = System.Text.Encoding.UTF8.GetBytes(path, destination[(p + 2)..]);
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)n);
        return p + 2 + n;
    }

    public static bool TryReadFileRequest(ReadOnlySpan<byte> payload, out string? path)
    {
        path = null;
        if (payload.Length < HeaderSize + 2)
        {
            return false;
        }
        int n = BinaryPrimitives.ReadUInt16BigEndian(payload[HeaderSize..]);
        var bytes = payload[(HeaderSize + 2)..];
        if (bytes.Length != n || n == 0 || n > 1024 || !System.Text.Unicode.Utf8.IsValid(bytes))
        {
            return false;
        }
        path = System.Text.Encoding.UTF8.GetString(bytes);
        return true;
    }

    public static int WriteListRequest(Span<byte> destination, ulong id, int skip)
    {
        int p = WriteHeader(destination, ChunkMessage.ListRequest, id);
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)skip);
        return p + 2;
    }

    public static bool TryReadListRequest(ReadOnlySpan<byte> payload, out int skip)
    {
        skip = 0;
        if (payload.Length != HeaderSize + 2)
        {
            return false;
        }
        skip = BinaryPrimitives.ReadUInt16BigEndian(payload[HeaderSize..]);
        return true;
    }

    /// <summary>Writes as many of <paramref name="manifests"/> (from <paramref name="skip"/>) as fit; returns the length and how many went in.</summary>
    public static int WriteListReply(Span<byte> destination, ulong id, IReadOnlyList<ChunkMeta> manifests, int skip, out int written)
    {
        int p = WriteHeader(destination, ChunkMessage.ListReply, id);
        int moreAt = p++;
        int countAt = p;
        p += 2;
        written = 0;
        for (int i = skip; i < manifests.Count && written < ushort.MaxValue; i++)
        {
            if (destination.Length - p < ChunkMeta.MaxSize)
            {
                break;
            }
            p += manifests[i].Write(destination[p..]);
            written++;
        }
        destination[moreAt] = (byte)(skip + written < manifests.Count ? 1 : 0);
        BinaryPrimitives.WriteUInt16BigEndian(destination[countAt..], (ushort)written);
        return p;
    }

    public static bool TryReadListReply(ReadOnlySpan<byte> payload, out bool more, out List<ChunkMeta>? manifests)
    {
        more = false;
        manifests = null;
        if (payload.Length < HeaderSize + 3 || payload[HeaderSize] > 1)
        {
            return false;
        }
        more = payload[HeaderSize] == 1;
        int count = BinaryPrimitives.ReadUInt16BigEndian(payload[(HeaderSize + 1)..]);
        int p = HeaderSize + 3;
        var list = new List<ChunkMeta>(Math.Min(count, 64));
        for (int i = 0; i < count; i++)
        {
            if (!ChunkMeta.TryRead(payload[p..], out var meta, out int used) || meta!.Kind != ChunkKind.Manifest)
            {
                return false;
            }
            list.Add(meta);
            p += used;
        }
        if (p != payload.Length)
        {
            return false;
        }
        manifests = list;
        return true;
    }

    public static int WriteDeleteRequest(Span<byte> destination, ulong id, string dataset)
    {
        int p = WriteHeader(destination, ChunkMessage.DeleteRequest, id);
        int n = System.Text.Encoding.UTF8.GetBytes(dataset, destination[(p + 2)..]);
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)n);
        return p + 2 + n;
    }

    /// <summary>A delete request naming a valid dataset (<see cref="ChunkMeta.IsValidName"/>), or false.</summary>
    public static bool TryReadDeleteRequest(ReadOnlySpan<byte> payload, out string? dataset)
    {
        dataset = null;
        if (payload.Length < HeaderSize + 2)
        {
            return false;
        }
        int n = BinaryPrimitives.ReadUInt16BigEndian(payload[HeaderSize..]);
        var bytes = payload[(HeaderSize + 2)..];
        if (bytes.Length != n || n > ChunkMeta.MaxNameBytes || !System.Text.Unicode.Utf8.IsValid(bytes))
        {
            return false;
        }
        string name = System.Text.Encoding.UTF8.GetString(bytes);
        if (!ChunkMeta.IsValidName(name))
        {
            return false;
        }
        dataset = name;
        return true;
    }

    public static int WriteDeleteReply(Span<byte> destination, ulong id, int replicas, long bytes)
    {
        int p = WriteHeader(destination, ChunkMessage.DeleteReply, id);
        BinaryPrimitives.WriteInt32BigEndian(destination[p..], replicas);
        BinaryPrimitives.WriteInt64BigEndian(destination[(p + 4)..], bytes);
        return p + 12;
    }

    public static bool TryReadDeleteReply(ReadOnlySpan<byte> payload, out int replicas, out long bytes)
    {
        replicas = 0;
        bytes = 0;
        if (payload.Length != HeaderSize + 12)
        {
            return false;
        }
        replicas = BinaryPrimitives.ReadInt32BigEndian(payload[HeaderSize..]);
        bytes = BinaryPrimitives.ReadInt64BigEndian(payload[(HeaderSize + 4)..]);
        return replicas >= 0 && bytes >= 0;
    }

    /// <summary>Bytes of one replica in a <see cref="ChunkMessage.ReplicaReply"/>.</summary>
    public const int ReplicaEntrySize = Key.Size + 1;

    /// <summary>Replicas one reply carries at most.</summary>
    public const int MaxReplicaEntries = (FrameLayout.MaxPayload - HeaderSize - 3) / ReplicaEntrySize;

    /// <summary><paramref name="after"/> null: from the first replica; <paramref name="dataset"/> null: every dataset.</summary>
    public static int WriteReplicaRequest(Span<byte> destination, ulong id, Key? after, string? dataset)
    {
        int p = WriteHeader(destination, ChunkMessage.ReplicaRequest, id);
        destination[p++] = (byte)(after is null ? 1 : 0);
        (after ?? Key.Zero).Write(destination[p..]);
        p += Key.Size;
        int n = dataset is null ? 0 : System.Text.Encoding.UTF8.GetBytes(dataset, destination[(p + 2)..]);
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)n);
        return p + 2 + n;
    }

    /// <summary>A replica request; <paramref name="dataset"/> null for every dataset, else a valid name.</summary>
    public static bool TryReadReplicaRequest(ReadOnlySpan<byte> payload, out Key? after, out string? dataset)
    {
        after = null;
        dataset = null;
        const int fixedSize = HeaderSize + 1 + Key.Size + 2;
        if (payload.Length < fixedSize || payload[HeaderSize] > 1)
        {
            return false;
        }
        if (payload[HeaderSize] == 0)
        {
            after = Key.Read(payload[(HeaderSize + 1)..]);
        }
        int n = BinaryPrimitives.ReadUInt16BigEndian(payload[(HeaderSize + 1 + Key.Size)..]);
        var bytes = payload[fixedSize..];
        if (bytes.Length != n || n > ChunkMeta.MaxNameBytes || !System.Text.Unicode.Utf8.IsValid(bytes))
        {
            return false;
        }
        if (n > 0)
        {
            string name = System.Text.Encoding.UTF8.GetString(bytes);
            if (!ChunkMeta.IsValidName(name))
            {
                return false;
            }
            dataset = name;
        }
        return true;
    }

    /// <summary>Writes <paramref name="replicas"/> (at most <see cref="MaxReplicaEntries"/>).</summary>
    public static int WriteReplicaReply(Span<byte> destination, ulong id, bool more, IReadOnlyList<(Key Chunk, ReplicaState State)> replicas)
    {
        ArgumentNullException.ThrowIfNull(replicas);
        if (replicas.Count > MaxReplicaEntries)
        {
            throw new ArgumentException($"a reply carries at most {MaxReplicaEntries} replicas", nameof(replicas));
        }
        int p = WriteHeader(destination, ChunkMessage.ReplicaReply, id);
        destination[p++] = (byte)(more ? 1 : 0);
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)replicas.Count);
        p += 2;
        foreach (var (chunk, state) in replicas)
        {
            chunk.Write(destination[p..]);
            destination[p + Key.Size] = (byte)state;
            p += ReplicaEntrySize;
        }
        return p;
    }

    public static bool TryReadReplicaReply(ReadOnlySpan<byte> payload, out bool more, out List<(Key Chunk, ReplicaState State)>? replicas)
    {
        more = false;
        replicas = null;
        if (payload.Length < HeaderSize + 3 || payload[HeaderSize] > 1)
        {
            return false;
        }
        more = payload[HeaderSize] == 1;
        int count = BinaryPrimitives.ReadUInt16BigEndian(payload[(HeaderSize + 1)..]);
        int p = HeaderSize + 3;
        if (count > MaxReplicaEntries || payload.Length != p + (count * ReplicaEntrySize))
        {
            return false;
        }
        var list = new List<(Key, ReplicaState)>(count);
        for (int i = 0; i < count; i++, p += ReplicaEntrySize)
        {
            byte state = payload[p + Key.Size];
            if (state > (byte)ReplicaState.Missing)
            {
                return false;
            }
            list.Add((Key.Read(payload[p..]), (ReplicaState)state));
        }
        replicas = list;
        return true;
    }
}

using System.Buffers.Binary;
using System.Text;
using Camdoop.KeyRouting;

namespace Camdoop.ChunkStore;

/// <summary>
/// Frames that carry a tombstone (<see cref="ChunkMessage.Tombstone"/>) and its acknowledgement
/// (<see cref="ChunkMessage.TombstoneApplied"/>). A tombstone's ids are split over parts of one frame each; every
/// part is applied on its own, so no part waits for another.
/// <code>
/// part:    header | manifest checksum (8) | part (2) | parts (2) | name (1 + UTF-8) | pending count (2)
///          | pending (2 each) | id count (2) | ids (20 each)
/// applied: header | manifest checksum (8) | part (2) | name (1 + UTF-8)
/// </code>
/// </summary>
public static class TombstoneWire
{
    /// <summary>Ids per part: a jumbo frame holds these with the name and up to <see cref="MaxPending"/> pending servers.</summary>
    public const int IdsPerPart = 300;

    /// <summary>Pending servers a part names; a tombstone with more names only these (its copies expire sooner).</summary>
    public const int MaxPending = 1024;

    public static int WritePart(Span<byte> destination, Tombstone tombstone, int part)
    {
        int p = ChunkWire.WriteHeader(destination, ChunkMessage.Tombstone, 0);
        BinaryPrimitives.WriteUInt64BigEndian(destination[p..], tombstone.ManifestChecksum);
        BinaryPrimitives.WriteUInt16BigEndian(destination[(p + 8)..], (ushort)part);
        BinaryPrimitives.WriteUInt16BigEndian(destination[(p + 10)..], (ushort)tombstone.Parts);
        p += 12;
        p += WriteName(destination[p..], tombstone.Name);
        var pending = tombstone.Pending.Order().Take(MaxPending).ToList();
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)pending.Count);
        p += 2;
        foreach (int server in pending)
        {
            BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)server);
            p += 2;
        }
        var ids = tombstone.Ids.Order().Skip(part * IdsPerPart).Take(IdsPerPart).ToList();
        BinaryPrimitives.WriteUInt16BigEndian(destination[p..], (ushort)ids.Count);
        p += 2;
        foreach (var id in ids)
        {
            id.Write(destination[p..]);
            p += Key.Size;
        }
        return p;
    }

    public static bool TryReadPart(ReadOnlySpan<byte> payload, int servers, out Tombstone? part, out int index, out int parts)
    {
        part = null;
        index = 0;
        parts = 0;
        int p = ChunkWire.HeaderSize;
        if (payload.Length < p + 12)
        {
            return false;
        }
        ulong checksum = BinaryPrimitives.ReadUInt64BigEndian(payload[p..]);
        index = BinaryPrimitives.ReadUInt16BigEndian(payload[(p + 8)..]);
        parts = BinaryPrimitives.ReadUInt16BigEndian(payload[(p + 10)..]);
        p += 12;
        if (parts == 0 || index >= parts || !TryReadName(payload, ref p, out string? name) || payload.Length < p + 2)
        {
            return false;
        }
        int pendingCount = BinaryPrimitives.ReadUInt16BigEndian(payload[p..]);
        p += 2;
        if (pendingCount > MaxPending || payload.Length < p + (2 * pendingCount) + 2)
        {
            return false;
        }
        var pending = new int[pendingCount];
        for (int i = 0; i < pendingCount; i++, p += 2)
        {
            pending[i] = BinaryPrimitives.ReadUInt16BigEndian(payload[p..]);
            if (pending[i] >= servers)
            {
                return false;
            }
        }
        int count = BinaryPrimitives.ReadUInt16BigEndian(payload[p..]);
        p += 2;
        if (count > IdsPerPart || payload.Length != p + (count * Key.Size))
        {
            return false;
        }
        var ids = new Key[count];
        for (int i = 0; i < count; i++, p += Key.Size)
        {
            ids[i] = Key.Read(payload[p..]);
        }
        part = new Tombstone(name!, checksum, ids, pending);
        return true;
    }

    public static int WriteApplied(Span<byte> destination, string name, ulong checksum, int part)
    {
        int p = ChunkWire.WriteHeader(destination, ChunkMessage.TombstoneApplied, 0);
        BinaryPrimitives.WriteUInt64BigEndian(destination[p..], checksum);
        BinaryPrimitives.WriteUInt16BigEndian(destination[(p + 8)..], (ushort)part);
        p += 10;
        return p + WriteName(destination[p..], name);
    }

    public static bool TryReadApplied(ReadOnlySpan<byte> payload, out string? name, out ulong checksum, out int part)
    {
        name = null;
        checksum = 0;
        part = 0;
        int p = ChunkWire.HeaderSize;
        if (payload.Length < p + 10)
        {
            return false;
        }
        checksum = BinaryPrimitives.ReadUInt64BigEndian(payload[p..]);
        part = BinaryPrimitives.ReadUInt16BigEndian(payload[(p + 8)..]);
        p += 10;
        return TryReadName(payload, ref p, out name) && p == payload.Length;
    }

    private static int WriteName(Span<byte> destination, string name)
    {
        int n = Encoding.UTF8.GetBytes(name, destination[1..]);
        destination[0] = (byte)n;
        return 1 + n;
    }

    private static bool TryReadName(ReadOnlySpan<byte> payload, ref int p, out string? name)
    {
        name = null;
        if (payload.Length < p + 1)
        {
            return false;
        }
        int n = payload[p];
        if (n == 0 || payload.Length < p + 1 + n)
        {
            return false;
        }
        try
        {
            name = new UTF8Encoding(false, true).GetString(payload.Slice(p + 1, n));
        }
        catch (DecoderFallbackException)
        {
            return false;
        }
        p += 1 + n;
        return ChunkMeta.IsValidName(name);
    }
}

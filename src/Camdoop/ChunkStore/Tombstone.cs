using System.Buffers.Binary;
using System.Text;
using Camdoop.KeyRouting;

namespace Camdoop.ChunkStore;

/// <summary>
/// What a removed dataset leaves behind while some server that may hold its replicas was away: the replicas that were
/// removed (the manifest by its checksum, the data chunks by id, all taken from the removed manifest), and the servers
/// that have not applied the removal yet. Identified by name and manifest checksum, so a dataset stored again under
/// the same name (a new manifest, new chunk ids) is never touched by the old one's tombstone.
/// <code>
/// file:  "CDTS" | version (1) | manifest checksum (8) | name (1 + UTF-8) | pending count (2) | pending (2 each)
///        | id count (4) | ids (20 each)
/// </code>
/// </summary>
public sealed class Tombstone
{
    private const uint Magic = 0x43445453; // "CDTS"
    private const byte Version = 1;

    public Tombstone(string name, ulong manifestChecksum, IEnumerable<Key> ids, IEnumerable<int> pending)
    {
        Name = name;
        ManifestChecksum = manifestChecksum;
        Ids = [.. ids];
        Pending = [.. pending];
    }

    public string Name { get; }

    public ulong ManifestChecksum { get; }

    /// <summary>The removed dataset's data chunks.</summary>
    public HashSet<Key> Ids { get; }

    /// <summary>Servers (torus indices) that have not applied the removal.</summary>
    public HashSet<int> Pending { get; }

    /// <summary>Parts a tombstone takes on the wire (ids split over frames).</summary>
    public int Parts => Math.Max(1, (Ids.Count + TombstoneWire.IdsPerPart - 1) / TombstoneWire.IdsPerPart);

    /// <summary>The file name it is kept under, in the data directory's tombstones folder.</summary>
    public string FileName => FormattableString.Invariant($"{Name}.{ManifestChecksum:x16}");

    /// <summary>Whether <paramref name="meta"/> is one of the removed replicas.</summary>
    public bool Covers(ChunkMeta meta) =>
        meta.Dataset == Name && (meta.Kind == ChunkKind.Manifest ? meta.Checksum == ManifestChecksum : Ids.Contains(meta.Id));

    public byte[] Encode()
    {
        var name = Encoding.UTF8.GetBytes(Name);
        var bytes = new byte[4 + 1 + 8 + 1 + name.Length + 2 + (2 * Pending.Count) + 4 + (Key.Size * Ids.Count)];
        var span = bytes.AsSpan();
        BinaryPrimitives.WriteUInt32BigEndian(span, Magic);
        span[4] = Version;
        BinaryPrimitives.WriteUInt64BigEndian(span[5..], ManifestChecksum);
        span[13] = (byte)name.Length;
        name.CopyTo(span[14..]);
        int p = 14 + name.Length;
        BinaryPrimitives.WriteUInt16BigEndian(span[p..], (ushort)Pending.Count);
        p += 2;
        foreach (int server in Pending.Order())
        {
            BinaryPrimitives.WriteUInt16BigEndian(span[p..], (ushort)server);
            p += 2;
        }
        BinaryPrimitives.WriteInt32BigEndian(span[p..], Ids.Count);
        p += 4;
        foreach (var id in Ids)
        {
            id.Write(span[p..]);
            p += Key.Size;
        }
        return bytes;
    }

    /// <summary>Decodes a tombstone file; null when it is not one (a torn write is dropped, never half-applied).</summary>
    public static Tombstone? Decode(ReadOnlySpan<byte> span, int servers)
    {
        if (span.Length < 14 || BinaryPrimitives.ReadUInt32BigEndian(span) != Magic || span[4] != Version)
        {
            return null;
        }
        ulong checksum = BinaryPrimitives.ReadUInt64BigEndian(span[5..]);
        int nameLength = span[13];
        int p = 14 + nameLength;
        if (nameLength == 0 || span.Length < p + 2)
        {
            return null;
        }
        string name = Encoding.UTF8.GetString(span.Slice(14, nameLength));
        int pendingCount = BinaryPrimitives.ReadUInt16BigEndian(span[p..]);
        p += 2;
        if (span.Length < p + (2 * pendingCount) + 4)
        {
            return null;
        }
        var pending = new List<int>(pendingCount);
        for (int i = 0; i < pendingCount; i++, p += 2)
        {
            int server = BinaryPrimitives.ReadUInt16BigEndian(span[p..]);
            if (server >= servers)
            {
                return null;
            }
            pending.Add(server);
        }
        int count = BinaryPrimitives.ReadInt32BigEndian(span[p..]);
        p += 4;
        if (count < 0 || count > DatasetManifest.MaxChunks || span.Length != p + ((long)count * Key.Size) || !ChunkMeta.IsValidName(name))
        {
            return null;
        }
        var ids = new Key[count];
        for (int i = 0; i < count; i++, p += Key.Size)
        {
            ids[i] = Key.Read(span[p..]);
        }
        return new Tombstone(name, checksum, ids, pending);
    }
}

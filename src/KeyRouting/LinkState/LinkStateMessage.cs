using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>
/// Wire format of the routing service's control frames: a batch of advertisements, used alike for flooding news,
/// for the database exchange when a link comes up and for the periodic refresh.
/// <code>
///  0 kind = 1 (1)   1 entry count (2, big-endian)
///  then per entry: origin x,y,z (3) | links (1) | epoch (8) | sequence (4)
/// </code>
/// </summary>
internal static class LinkStateMessage
{
    public const byte KindAdvertisements = 1;
    public const int HeaderSize = 3;
    public const int EntrySize = 16;

    /// <summary>Entries per jumbo frame.</summary>
    public const int MaxEntries = (FrameLayout.MaxPayload - HeaderSize) / EntrySize;

    public static int SizeFor(int entries) => HeaderSize + (entries * EntrySize);

    public static void WriteHeader(Span<byte> payload, int entries)
    {
        payload[0] = KindAdvertisements;
        BinaryPrimitives.WriteUInt16BigEndian(payload[1..], (ushort)entries);
    }

    public static void WriteEntry(Span<byte> payload, int slot, Torus torus, in LinkStateAdvertisement lsa)
    {
        var e = payload.Slice(HeaderSize + (slot * EntrySize), EntrySize);
        var c = torus.CoordinateOf(lsa.Origin);
        e[0] = (byte)c.X;
        e[1] = (byte)c.Y;
        e[2] = (byte)c.Z;
        e[3] = lsa.Links;
        BinaryPrimitives.WriteUInt64BigEndian(e[4..], lsa.Epoch);
        BinaryPrimitives.WriteUInt32BigEndian(e[12..], lsa.Sequence);
    }

    /// <summary>Validates the batch header; returns the entry count or -1 when the payload is malformed.</summary>
    public static int TryReadCount(ReadOnlySpan<byte> payload)
    {
        if (payload.Length < HeaderSize || payload[0] != KindAdvertisements)
        {
            return -1;
        }
        int count = BinaryPrimitives.ReadUInt16BigEndian(payload[1..]);
        return payload.Length >= SizeFor(count) ? count : -1;
    }

    /// <summary>Reads entry <paramref name="slot"/>; false when it names a server outside the torus or unknown link bits.</summary>
    public static bool TryReadEntry(ReadOnlySpan<byte> payload, int slot, Torus torus, out LinkStateAdvertisement lsa)
    {
        var e = payload.Slice(HeaderSize + (slot * EntrySize), EntrySize);
        var c = new Coordinate(e[0], e[1], e[2]);
        byte links = e[3];
        if (!torus.Contains(c) || (links & ~LinkStateAdvertisement.AllUp) != 0)
        {
            lsa = default;
            return false;
        }
        lsa = new LinkStateAdvertisement(
            torus.IndexOf(c),
            BinaryPrimitives.ReadUInt64BigEndian(e[4..]),
            BinaryPrimitives.ReadUInt32BigEndian(e[12..]),
            links);
        return true;
    }
}

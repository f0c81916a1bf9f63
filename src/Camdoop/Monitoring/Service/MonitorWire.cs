using System.Buffers.Binary;
using System.Text;
using Camdoop.Monitoring.Tables;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Monitoring.Service;

/// <summary>Which query and round a message belongs to: the asking server, its query number, the round.</summary>
public readonly record struct RoundId(Coordinate Root, uint Query, long Round);

/// <summary>
/// The monitoring service's messages, one per frame between neighbours (big-endian):
/// a round request, sent down the tree: kind 1 | query u32 | root x,y,z (3 bytes) | round u32 | combine u8 |
/// budget ns i64 | query text length u16 | query text (UTF-8); and a result, sent up: kind 2 | query u32 |
/// root (3) | round u32 | servers u32 | last u8 | rows u16 | rows. A row is its values, each a tag (0 number: f64;
/// 1 text: length u8 and UTF-8; 2 null). A subtree's result may take several frames; the last carries the number
/// of servers it covers.
/// </summary>
public static class MonitorWire
{
    public const byte KindRequest = 1;
    public const byte KindResult = 2;
    public const int RequestHeaderSize = 1 + 4 + 3 + 4 + 1 + 8 + 2;
    public const int ResultHeaderSize = 1 + 4 + 3 + 4 + 4 + 1 + 2;
    public const int MaxPayload = FrameLayout.MaxPayload;
    public const int MaxQueryBytes = MaxPayload - RequestHeaderSize;

    private const byte TagNumber = 0;
    private const byte TagText = 1;
    private const byte TagNull = 2;

    public static byte[] Request(RoundId id, bool combine, long budgetNs, string query)
    {
        int length = Encoding.UTF8.GetByteCount(query);
        if (length > MaxQueryBytes)
        {
            throw new ArgumentException($"a query of {length} bytes does not fit a frame (at most {MaxQueryBytes})", nameof(query));
        }
        var payload = new byte[RequestHeaderSize + length];
        var span = payload.AsSpan();
        span[0] = KindRequest;
        WriteId(span[1..], id);
        span[12] = combine ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteInt64BigEndian(span[13..], budgetNs);
        BinaryPrimitives.WriteUInt16BigEndian(span[21..], (ushort)length);
        Encoding.UTF8.GetBytes(query, span[RequestHeaderSize..]);
        return payload;
    }

    public static bool TryReadRequest(ReadOnlySpan<byte> payload, Torus torus, out RoundId id, out bool combine, out long budgetNs, out string query)
    {
        id = default;
        combine = false;
        budgetNs = 0;
        query = "";
        if (payload.Length < RequestHeaderSize || payload[0] != KindRequest || !TryReadId(payload[1..], torus, out id))
        {
            return false;
        }
        combine = payload[12] != 0;
        budgetNs = BinaryPrimitives.ReadInt64BigEndian(payload[13..]);
        int length = BinaryPrimitives.ReadUInt16BigEndian(payload[21..]);
        if (budgetNs < 0 || payload.Length != RequestHeaderSize + length)
        {
            return false;
        }
        try
        {
            query = new UTF8Encoding(false, true).GetString(payload[RequestHeaderSize..]);
        }
        catch (DecoderFallbackException)
        {
            return false;
        }
        return true;
    }

    /// <summary>Splits rows into result payloads of at most one frame each; the last carries <paramref name="servers"/>.</summary>
    public static List<byte[]> Results(RoundId id, int servers, List<QueryValue[]> rows)
    {
        var payloads = new List<byte[]>();
        var buffer = new byte[MaxPayload];
        int position = ResultHeaderSize;
        int count = 0;
        foreach (var row in rows)
        {
            int size = RowSize(row);
            if (position + size > MaxPayload || count == ushort.MaxValue)
            {
                payloads.Add(Finish(buffer, position, id, 0, last: false, count));
                position = ResultHeaderSize;
                count = 0;
            }
            position += WriteRow(buffer.AsSpan(position), row);
            count++;
        }
        payloads.Add(Finish(buffer, position, id, servers, last: true, count));
        return payloads;
    }

    /// <summary>Reads which round a result belongs to.</summary>
    public static bool TryReadResultId(ReadOnlySpan<byte> payload, Torus torus, out RoundId id)
    {
        id = default;
        return payload.Length >= ResultHeaderSize && payload[0] == KindResult && TryReadId(payload[1..], torus, out id);
    }

    /// <summary>Reads a result's header and rows; false when anything is out of place.</summary>
    public static bool TryReadResult(ReadOnlySpan<byte> payload, Torus torus, int width, out RoundId id, out int servers, out bool last, List<QueryValue[]> rows)
    {
        id = default;
        servers = 0;
        last = false;
        if (payload.Length < ResultHeaderSize || payload[0] != KindResult || !TryReadId(payload[1..], torus, out id))
        {
            return false;
        }
        long s = BinaryPrimitives.ReadUInt32BigEndian(payload[12..]);
        last = payload[16] != 0;
        int count = BinaryPrimitives.ReadUInt16BigEndian(payload[17..]);
        if (s > torus.Count || payload[16] > 1)
        {
            return false;
        }
        servers = (int)s;
        int position = ResultHeaderSize;
        int added = 0;
        for (int r = 0; r < count; r++)
        {
            var row = new QueryValue[width];
            for (int c = 0; c < width; c++)
            {
                if (!TryReadValue(payload, ref position, out row[c]))
                {
                    rows.RemoveRange(rows.Count - added, added);
                    return false;
                }
            }
            rows.Add(row);
            added++;
        }
        if (position != payload.Length)
        {
            rows.RemoveRange(rows.Count - added, added);
            return false;
        }
        return true;
    }

    /// <summary>The kind of a message (0 when empty).</summary>
    public static byte KindOf(ReadOnlySpan<byte> payload) => payload.IsEmpty ? (byte)0 : payload[0];

    private static byte[] Finish(byte[] buffer, int length, RoundId id, int servers, bool last, int count)
    {
        var span = buffer.AsSpan();
        span[0] = KindResult;
        WriteId(span[1..], id);
        BinaryPrimitives.WriteUInt32BigEndian(span[12..], (uint)servers);
        span[16] = last ? (byte)1 : (byte)0;
        BinaryPrimitives.WriteUInt16BigEndian(span[17..], (ushort)count);
        return span[..length].ToArray();
    }

    private static void WriteId(Span<byte> span, RoundId id)
    {
        BinaryPrimitives.WriteUInt32BigEndian(span, id.Query);
        span[4] = (byte)id.Root.X;
        span[5] = (byte)id.Root.Y;
        span[6] = (byte)id.Root.Z;
        BinaryPrimitives.WriteUInt32BigEndian(span[7..], (uint)id.Round);
    }

    private static bool TryReadId(ReadOnlySpan<byte> span, Torus torus, out RoundId id)
    {
        var root = new Coordinate(span[4], span[5], span[6]);
        id = new RoundId(root, BinaryPrimitives.ReadUInt32BigEndian(span), BinaryPrimitives.ReadUInt32BigEndian(span[7..]));
        return torus.Contains(root);
    }

    private static int RowSize(QueryValue[] row)
    {
        int size = 0;
        foreach (var v in row)
        {
            size += v.IsNull ? 1 : v.IsText ? 2 + Math.Min(255, Encoding.UTF8.GetByteCount(v.Text!)) : 9;
        }
        return size;
    }

    private static int WriteRow(Span<byte> span, QueryValue[] row)
    {
        int position = 0;
        foreach (var v in row)
        {
            if (v.IsNull)
            {
                span[position++] = TagNull;
            }
            else if (v.IsText)
            {
                span[position++] = TagText;
                // Texts are names (servers, ports, services, jobs): longer ones are cut at 255 bytes.
                var bytes = Encoding.UTF8.GetBytes(v.Text!);
                int n = Math.Min(255, bytes.Length);
                span[position++] = (byte)n;
                bytes.AsSpan(0, n).CopyTo(span[position..]);
                position += n;
            }
            else
            {
                span[position++] = TagNumber;
                BinaryPrimitives.WriteDoubleBigEndian(span[position..], v.Number);
                position += 8;
            }
        }
        return position;
    }

    private static bool TryReadValue(ReadOnlySpan<byte> payload, ref int position, out QueryValue value)
    {
        value = QueryValue.Null;
        if (position >= payload.Length)
        {
            return false;
        }
        byte tag = payload[position++];
        switch (tag)
        {
            case TagNull:
                return true;
            case TagNumber:
                if (position + 8 > payload.Length)
                {
                    return false;
                }
                value = BinaryPrimitives.ReadDoubleBigEndian(payload[position..]);
                position += 8;
                return true;
            case TagText:
                if (position >= payload.Length || position + 1 + payload[position] > payload.Length)
                {
                    return false;
                }
                int n = payload[position++];
                try
                {
                    value = new UTF8Encoding(false, true).GetString(payload.Slice(position, n));
                }
                catch (DecoderFallbackException)
                {
                    return false;
                }
                position += n;
                return true;
            default:
                return false;
        }
    }
}

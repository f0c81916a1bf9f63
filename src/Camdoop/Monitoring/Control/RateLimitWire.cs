using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Monitoring.Control;

/// <summary>
/// A rate limit on its way down the asking server's tree, one frame between neighbours (big-endian): kind 3 |
/// root x,y,z (3 bytes) | target u8 | service u8 | job u64 | rate bytes/s i64 | ports u8 | servers u16 | servers
/// (x,y,z each; none: every server).
/// </summary>
public static class RateLimitWire
{
    public const byte Kind = 3;
    public const int HeaderSize = 1 + 3 + 1 + 1 + 8 + 8 + 1 + 2;

    /// <summary>The most servers one message names.</summary>
    public const int MaxServers = (FrameLayout.MaxPayload - HeaderSize) / 3;

    public static byte[] Write(Coordinate root, RateLimit limit)
    {
        ArgumentNullException.ThrowIfNull(limit);
        limit.Check();
        if (limit.Servers.Count > MaxServers)
        {
            throw new ArgumentException($"a limit names at most {MaxServers} servers");
        }
        var payload = new byte[HeaderSize + (3 * limit.Servers.Count)];
        var span = payload.AsSpan();
        span[0] = Kind;
        WriteCoordinate(span[1..], root);
        span[4] = (byte)limit.Target;
        span[5] = limit.ServiceId;
        BinaryPrimitives.WriteUInt64BigEndian(span[6..], limit.JobId);
        BinaryPrimitives.WriteInt64BigEndian(span[14..], limit.BytesPerSecond);
        span[22] = (byte)limit.PortMask;
        BinaryPrimitives.WriteUInt16BigEndian(span[23..], (ushort)limit.Servers.Count);
        for (int i = 0; i < limit.Servers.Count; i++)
        {
            WriteCoordinate(span[(HeaderSize + (3 * i))..], limit.Servers[i]);
        }
        return payload;
    }

    /// <summary>Reads a limit message; false when anything is out of place (a server or root outside the torus, a bad field).</summary>
    public static bool TryRead(ReadOnlySpan<byte> payload, Torus torus, out Coordinate root, out RateLimit? limit)
    {
        ArgumentNullException.ThrowIfNull(torus);
        root = default;
        limit = null;
        if (payload.Length < HeaderSize || payload[0] != Kind)
        {
            return false;
        }
        root = ReadCoordinate(payload[1..]);
        int count = BinaryPrimitives.ReadUInt16BigEndian(payload[23..]);
        if (!torus.Contains(root) || payload.Length != HeaderSize + (3 * count))
        {
            return false;
        }
        var servers = new Coordinate[count];
        for (int i = 0; i < count; i++)
        {
            servers[i] = ReadCoordinate(payload[(HeaderSize + (3 * i))..]);
            if (!torus.Contains(servers[i]))
            {
                return false;
            }
        }
        var read = new RateLimit((RateLimitTarget)payload[4], payload[5], BinaryPrimitives.ReadUInt64BigEndian(payload[6..]),
            BinaryPrimitives.ReadInt64BigEndian(payload[14..]), payload[22], servers);
        try
        {
            read.Check();
        }
        catch (ArgumentException)
        {
            return false;
        }
        limit = read;
        return true;
    }

    private static void WriteCoordinate(Span<byte> span, Coordinate c)
    {
        span[0] = (byte)c.X;
        span[1] = (byte)c.Y;
        span[2] = (byte)c.Z;
    }

    private static Coordinate ReadCoordinate(ReadOnlySpan<byte> span) => new(span[0], span[1], span[2]);
}

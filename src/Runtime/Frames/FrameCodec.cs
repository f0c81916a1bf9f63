using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Frames;

/// <summary>Encodes and validates CamCube frames in place. No allocation; nothing here throws on bad input.</summary>
public static class FrameCodec
{
    /// <summary>
    /// Writes headers, key and payload into <paramref name="frame"/> and returns the frame length (padded to the
    /// Ethernet minimum). The MAC addresses are left zero for the link transport to stamp.
    /// </summary>
    public static int Write(Span<byte> frame, ref FrameHeader header, ReadOnlySpan<byte> key, ReadOnlySpan<byte> payload)
    {
        int offset = WriteHeader(frame, ref header, key, payload.Length);
        payload.CopyTo(frame[offset..]);
        return Finish(frame, offset + payload.Length);
    }

    /// <summary>
    /// Writes the headers for a payload of <paramref name="payloadLength"/> bytes and returns where the payload starts;
    /// the caller writes the payload there and calls <see cref="Finish"/>.
    /// </summary>
    public static int WriteHeader(Span<byte> frame, ref FrameHeader header, ReadOnlySpan<byte> key, int payloadLength)
    {
        bool keyed = header.IsKeyRouted;
        int payloadOffset = FrameLayout.PayloadOffset(keyed);
        if ((uint)payloadLength > (uint)(FrameLayout.MaxFrameSize - payloadOffset))
        {
            throw new ArgumentOutOfRangeException(nameof(payloadLength), payloadLength, "payload does not fit a jumbo frame");
        }
        if (keyed && key.Length != FrameLayout.KeySize)
        {
            throw new ArgumentException("a key-routed frame needs a 20-byte key", nameof(key));
        }
        header.PayloadLength = (ushort)payloadLength;
        frame[..12].Clear();
        BinaryPrimitives.WriteUInt16BigEndian(frame[FrameLayout.OffsetEtherType..], FrameLayout.EtherType);
        frame[FrameLayout.OffsetVersion] = FrameLayout.Version;
        frame[FrameLayout.OffsetService] = header.ServiceId;
        frame[FrameLayout.OffsetFlags] = (byte)header.Flags;
        frame[FrameLayout.OffsetTtl] = header.Ttl;
        WriteCoordinate(frame[FrameLayout.OffsetSource..], header.Source);
        WriteCoordinate(frame[FrameLayout.OffsetDestination..], header.Destination);
        BinaryPrimitives.WriteUInt16BigEndian(frame[FrameLayout.OffsetPayloadLength..], (ushort)payloadLength);
        if (keyed)
        {
            key.CopyTo(frame[FrameLayout.OffsetKey..]);
        }
        return payloadOffset;
    }

    /// <summary>Pads a frame whose content ends at <paramref name="end"/> to the Ethernet minimum; returns its length.</summary>
    public static int Finish(Span<byte> frame, int end)
    {
        if (end < FrameLayout.MinFrameSize)
        {
            frame[end..FrameLayout.MinFrameSize].Clear();
            return FrameLayout.MinFrameSize;
        }
        return end;
    }

    /// <summary>
    /// Validates <paramref name="frame"/> and reads its CamCube header. A frame may be longer than its content
    /// (Ethernet padding) but never shorter.
    /// </summary>
    public static FrameError TryRead(ReadOnlySpan<byte> frame, Torus torus, out FrameHeader header)
    {
        header = default;
        if (frame.Length > FrameLayout.MaxFrameSize)
        {
            return FrameError.Oversize;
        }
        if (frame.Length < FrameLayout.HeaderSize)
        {
            return frame.Length >= FrameLayout.EthernetHeaderSize && ReadEtherType(frame) != FrameLayout.EtherType
                ? FrameError.WrongEtherType
                : FrameError.Truncated;
        }
        if (ReadEtherType(frame) != FrameLayout.EtherType)
        {
            return FrameError.WrongEtherType;
        }
        if (frame[FrameLayout.OffsetVersion] != FrameLayout.Version)
        {
            return FrameError.WrongVersion;
        }
        var flags = (FrameFlags)frame[FrameLayout.OffsetFlags];
        if ((flags & ~FrameFlags.Known) != 0)
        {
            return FrameError.BadFlags;
        }
        header.ServiceId = frame[FrameLayout.OffsetService];
        header.Flags = flags;
        header.Ttl = frame[FrameLayout.OffsetTtl];
        header.Source = ReadCoordinate(frame[FrameLayout.OffsetSource..]);
        header.Destination = ReadCoordinate(frame[FrameLayout.OffsetDestination..]);
        header.PayloadLength = BinaryPrimitives.ReadUInt16BigEndian(frame[FrameLayout.OffsetPayloadLength..]);
        int payloadOffset = header.PayloadOffset;
        if (frame.Length < payloadOffset)
        {
            return FrameError.Truncated;
        }
        if (payloadOffset + header.PayloadLength > frame.Length)
        {
            return FrameError.BadLength;
        }
        if (!torus.Contains(header.Source) || !torus.Contains(header.Destination))
        {
            return FrameError.BadCoordinate;
        }
        return FrameError.None;
    }

    public static ReadOnlySpan<byte> Payload(ReadOnlySpan<byte> frame, in FrameHeader header) =>
        frame.Slice(header.PayloadOffset, header.PayloadLength);

    public static ReadOnlySpan<byte> Key(ReadOnlySpan<byte> frame, in FrameHeader header) =>
        header.IsKeyRouted ? frame.Slice(FrameLayout.OffsetKey, FrameLayout.KeySize) : default;

    /// <summary>Decrements the TTL in place for forwarding; false when it has run out.</summary>
    public static bool TryDecrementTtl(Span<byte> frame)
    {
        byte ttl = frame[FrameLayout.OffsetTtl];
        if (ttl <= 1)
        {
            return false;
        }
        frame[FrameLayout.OffsetTtl] = (byte)(ttl - 1);
        return true;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ushort ReadEtherType(ReadOnlySpan<byte> frame) =>
        BinaryPrimitives.ReadUInt16BigEndian(frame[FrameLayout.OffsetEtherType..]);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void WriteCoordinate(Span<byte> dst, Coordinate c)
    {
        dst[2] = (byte)c.Z;
        dst[1] = (byte)c.Y;
        dst[0] = (byte)c.X;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Coordinate ReadCoordinate(ReadOnlySpan<byte> src) => new(src[0], src[1], src[2]);
}

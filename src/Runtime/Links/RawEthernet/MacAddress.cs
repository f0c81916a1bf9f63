using System.Buffers.Binary;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>A 48-bit Ethernet address packed into the low bits of a <see cref="ulong"/> (first byte most significant).</summary>
public readonly record struct MacAddress(ulong Value)
{
    public static readonly MacAddress Broadcast = new(0xFFFF_FFFF_FFFFUL);

    /// <summary>Group (multicast or broadcast) addresses have the low bit of the first byte set; never a sender.</summary>
    public bool IsGroup => (Value & 0x0100_0000_0000UL) != 0;

    public bool IsZero => Value == 0;

    public static MacAddress Read(ReadOnlySpan<byte> bytes) =>
        new(((ulong)BinaryPrimitives.ReadUInt32BigEndian(bytes) << 16) | BinaryPrimitives.ReadUInt16BigEndian(bytes[4..]));

    public void Write(Span<byte> bytes)
    {
        BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)(Value >> 16));
        BinaryPrimitives.WriteUInt16BigEndian(bytes[4..], (ushort)Value);
    }

    public override string ToString()
    {
        Span<byte> b = stackalloc byte[6];
        Write(b);
        return $"{b[0]:x2}:{b[1]:x2}:{b[2]:x2}:{b[3]:x2}:{b[4]:x2}:{b[5]:x2}";
    }
}

using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using Camdoop.Records;

namespace Camdoop.MapReduce.Records;

/// <summary>
/// A fast 64-bit hash of a key, for spreading keys over stripes and reduce tasks (not for checksums: that is
/// <see cref="XxHash64"/>). The wyhash construction: 64x64-to-128-bit multiplies whose halves are folded together,
/// every input byte read once, 16 bytes per multiply. A key of up to 16 bytes costs two independent loads and two
/// multiplies, a fraction of XxHash64's chain of rounds, which was a tenth of the map phase.
/// </summary>
public static class KeyHash
{
    private const ulong S0 = 0xA076_1D64_78BD_642F;
    private const ulong S1 = 0xE703_7ED1_A0B4_28DB;
    private const ulong S2 = 0x8EBC_6AF0_9C88_C6E3;

    public static ulong Of(ReadOnlySpan<byte> key, ulong seed)
    {
        int length = key.Length;
        seed ^= Mum(seed ^ S0, S1);
        ulong a, b;
        if (length <= 16)
        {
            if (length >= 8)
            {
                a = BinaryPrimitives.ReadUInt64LittleEndian(key);
                b = BinaryPrimitives.ReadUInt64LittleEndian(key[(length - 8)..]);
            }
            else if (length >= 4)
            {
                a = BinaryPrimitives.ReadUInt32LittleEndian(key);
                b = BinaryPrimitives.ReadUInt32LittleEndian(key[(length - 4)..]);
            }
            else if (length > 0)
            {
                a = ((ulong)key[0] << 16) | ((ulong)key[length >> 1] << 8) | key[length - 1];
                b = 0;
            }
            else
            {
                a = b = 0;
            }
        }
        else
        {
            var rest = key;
            while (rest.Length > 16)
            {
                seed = Mum(BinaryPrimitives.ReadUInt64LittleEndian(rest) ^ S1, BinaryPrimitives.ReadUInt64LittleEndian(rest[8..]) ^ seed);
                rest = rest[16..];
            }
            a = BinaryPrimitives.ReadUInt64LittleEndian(key[(length - 16)..]);
            b = BinaryPrimitives.ReadUInt64LittleEndian(key[(length - 8)..]);
        }
        UInt128 product = (UInt128)(a ^ S1) * (b ^ seed);
        return Mum((ulong)product ^ S0 ^ (ulong)length, (ulong)(product >> 64) ^ S1 ^ S2);
    }

    /// <summary>The 128-bit product of <paramref name="a"/> and <paramref name="b"/>, its halves xored.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Mum(ulong a, ulong b)
    {
        UInt128 product = (UInt128)a * b;
        return (ulong)product ^ (ulong)(product >> 64);
    }
}

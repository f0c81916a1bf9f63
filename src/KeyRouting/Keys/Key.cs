using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Text;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>
/// A 160-bit CamCube identifier (the Camdoop paper, §3). Stored as three big-endian words so that comparing the words as
/// unsigned integers is the same as comparing the 20 bytes lexicographically, 8 bytes at a time.
/// </summary>
public readonly struct Key : IEquatable<Key>, IComparable<Key>, IComparable
{
    public const int Size = 20;

    /// <summary>Bytes of a key below the top 64 bits: the "remaining bits" that choose among remap candidates.</summary>
    public const int SuffixSize = 12;

    private readonly ulong _high;
    private readonly ulong _middle;
    private readonly uint _low;

    public Key(ulong high, ulong middle, uint low)
    {
        _high = high;
        _middle = middle;
        _low = low;
    }

    public static Key Zero => default;

    public static Key MaxValue => new(ulong.MaxValue, ulong.MaxValue, uint.MaxValue);

    /// <summary>Bytes 0..7: the top 64 bits, which choose the primary owner.</summary>
    public ulong High => _high;

    /// <summary>Bytes 8..15.</summary>
    public ulong Middle => _middle;

    /// <summary>Bytes 16..19.</summary>
    public uint Low => _low;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Equals(Key other) => _high == other._high && _middle == other._middle && _low == other._low;

    public override bool Equals([NotNullWhen(true)] object? obj) => obj is Key k && Equals(k);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int CompareTo(Key other)
    {
        if (_high != other._high)
        {
            return _high < other._high ? -1 : 1;
        }
        if (_middle != other._middle)
        {
            return _middle < other._middle ? -1 : 1;
        }
        return _low.CompareTo(other._low);
    }

    public int CompareTo(object? obj) => obj switch
    {
        null => 1,
        Key k => CompareTo(k),
        _ => throw new ArgumentException("not a Key", nameof(obj)),
    };

    /// <summary>Keys are usually SHA-1 outputs, but coordinate keys share most bits, so every word is mixed in.</summary>
    public override int GetHashCode()
    {
        ulong h = (_high * 0x9E37_79B9_7F4A_7C15UL) ^ (_middle * 0xC2B2_AE3D_27D4_EB4FUL) ^ _low;
        h ^= h >> 29;
        return (int)h ^ (int)(h >> 32);
    }

    /// <summary>Writes the key as 20 big-endian bytes.</summary>
    public void Write(Span<byte> destination)
    {
        if (destination.Length < Size)
        {
            throw new ArgumentException($"a key needs {Size} bytes", nameof(destination));
        }
        BinaryPrimitives.WriteUInt64BigEndian(destination, _high);
        BinaryPrimitives.WriteUInt64BigEndian(destination[8..], _middle);
        BinaryPrimitives.WriteUInt32BigEndian(destination[16..], _low);
    }

    /// <summary>Reads a key from the first 20 bytes of <paramref name="source"/>.</summary>
    public static Key Read(ReadOnlySpan<byte> source)
    {
        if (source.Length < Size)
        {
            throw new ArgumentException($"a key needs {Size} bytes", nameof(source));
        }
        return new Key(
            BinaryPrimitives.ReadUInt64BigEndian(source),
            BinaryPrimitives.ReadUInt64BigEndian(source[8..]),
            BinaryPrimitives.ReadUInt32BigEndian(source[16..]));
    }

    /// <summary>The SHA-1 of <paramref name="data"/>: uniformly spread keys for names, chunks and jobs.</summary>
    public static Key FromBytes(ReadOnlySpan<byte> data)
    {
        Span<byte> hash = stackalloc byte[Size];
        SHA1.HashData(data, hash);
        return Read(hash);
    }

    /// <summary>The SHA-1 of the UTF-8 bytes of <paramref name="text"/>.</summary>
    public static Key FromString(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        int max = Encoding.UTF8.GetMaxByteCount(text.Length);
        if (max <= 512)
        {
            Span<byte> buffer = stackalloc byte[512];
            int n = Encoding.UTF8.GetBytes(text, buffer);
            return FromBytes(buffer[..n]);
        }
        byte[] rented = ArrayPool<byte>.Shared.Rent(max);
        try
        {
            int n = Encoding.UTF8.GetBytes(text, rented);
            return FromBytes(rented.AsSpan(0, n));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// A key whose primary owner is <paramref name="coordinate"/> and whose remaining 96 bits are the first
    /// 12 bytes of <paramref name="suffix"/> (e.g. the SHA-1 of a job id), as the paper builds vertex ids (§4.1).
    /// </summary>
    public static Key FromCoordinate(Torus torus, Coordinate coordinate, in Key suffix) =>
        new(KeyMapper.FirstHighOf(torus, coordinate), suffix._high, (uint)(suffix._middle >> 32));

    /// <summary>As <see cref="FromCoordinate(Torus, Coordinate, in Key)"/> with the suffix bytes given directly (at least 12).</summary>
    public static Key FromCoordinate(Torus torus, Coordinate coordinate, ReadOnlySpan<byte> suffix)
    {
        if (suffix.Length < SuffixSize)
        {
            throw new ArgumentException($"a key suffix needs {SuffixSize} bytes", nameof(suffix));
        }
        return new Key(
            KeyMapper.FirstHighOf(torus, coordinate),
            BinaryPrimitives.ReadUInt64BigEndian(suffix),
            BinaryPrimitives.ReadUInt32BigEndian(suffix[8..]));
    }

    /// <summary>40 lowercase hex digits.</summary>
    public override string ToString() => string.Create(40, this, static (chars, key) =>
    {
        Span<byte> bytes = stackalloc byte[Size];
        key.Write(bytes);
        for (int i = 0; i < Size; i++)
        {
            chars[2 * i] = HexDigit(bytes[i] >> 4);
            chars[(2 * i) + 1] = HexDigit(bytes[i] & 0xF);
        }
    });

    /// <summary>Parses 40 hex digits (either case).</summary>
    public static bool TryParse(ReadOnlySpan<char> text, out Key key)
    {
        key = default;
        text = text.Trim();
        if (text.Length != 2 * Size)
        {
            return false;
        }
        Span<byte> bytes = stackalloc byte[Size];
        for (int i = 0; i < Size; i++)
        {
            if (!byte.TryParse(text.Slice(2 * i, 2), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out bytes[i]))
            {
                return false;
            }
        }
        key = Read(bytes);
        return true;
    }

    public static Key Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        return TryParse(text, out var key) ? key : throw new FormatException($"'{text}' is not a 160-bit key (40 hex digits)");
    }

    public static bool operator ==(Key left, Key right) => left.Equals(right);

    public static bool operator !=(Key left, Key right) => !left.Equals(right);

    public static bool operator <(Key left, Key right) => left.CompareTo(right) < 0;

    public static bool operator <=(Key left, Key right) => left.CompareTo(right) <= 0;

    public static bool operator >(Key left, Key right) => left.CompareTo(right) > 0;

    public static bool operator >=(Key left, Key right) => left.CompareTo(right) >= 0;

    private static char HexDigit(int v) => (char)(v < 10 ? '0' + v : 'a' + v - 10);
}

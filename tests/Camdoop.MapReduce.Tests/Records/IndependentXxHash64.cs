using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;

namespace Camdoop.MapReduce.Tests.Records;

/// <summary>
/// XXH64 written from its specification, independently of System.IO.Hashing, which the product's
/// <see cref="Camdoop.Records.XxHash64"/> uses: the checksums on disk and on the wire are checked against it. It is
/// the implementation older builds wrote their checksums with. One-shot <see cref="Hash"/> and an incremental instance.
/// </summary>
internal sealed class IndependentXxHash64
{
    private const ulong P1 = 11400714785074694791UL;
    private const ulong P2 = 14029467366897019727UL;
    private const ulong P3 = 1609587929392839161UL;
    private const ulong P4 = 9650029242287828579UL;
    private const ulong P5 = 2870177450012600261UL;

    private readonly byte[] _pending = new byte[32];
    private ulong _seed;
    private ulong _v1, _v2, _v3, _v4;
    private int _pendingLength;
    private long _totalLength;

    public IndependentXxHash64(ulong seed = 0) => Reset(seed);

    public void Reset(ulong seed = 0)
    {
        _seed = seed;
        _v1 = seed + P1 + P2;
        _v2 = seed + P2;
        _v3 = seed;
        _v4 = seed - P1;
        _pendingLength = 0;
        _totalLength = 0;
    }

    public void Append(ReadOnlySpan<byte> data)
    {
        _totalLength += data.Length;
        if (_pendingLength > 0)
        {
            int take = Math.Min(32 - _pendingLength, data.Length);
            data[..take].CopyTo(_pending.AsSpan(_pendingLength));
            _pendingLength += take;
            data = data[take..];
            if (_pendingLength < 32)
            {
                return;
            }
            Stripe(_pending);
            _pendingLength = 0;
        }
        while (data.Length >= 32)
        {
            Stripe(data);
            data = data[32..];
        }
        data.CopyTo(_pending);
        _pendingLength = data.Length;
    }

    public ulong GetDigest()
    {
        ulong h = _totalLength >= 32
            ? MergeLanes(_v1, _v2, _v3, _v4)
            : _seed + P5;
        h += (ulong)_totalLength;
        return Finish(h, _pending.AsSpan(0, _pendingLength));
    }

    /// <summary>One-shot hash of <paramref name="data"/>.</summary>
    public static ulong Hash(ReadOnlySpan<byte> data, ulong seed = 0)
    {
        if (data.Length < 32)
        {
            return HashShort(data, seed);
        }
        ulong h;
        int length = data.Length;
        if (length >= 32)
        {
            ulong v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
            do
            {
                v1 = Round(v1, BinaryPrimitives.ReadUInt64LittleEndian(data));
                v2 = Round(v2, BinaryPrimitives.ReadUInt64LittleEndian(data[8..]));
                v3 = Round(v3, BinaryPrimitives.ReadUInt64LittleEndian(data[16..]));
                v4 = Round(v4, BinaryPrimitives.ReadUInt64LittleEndian(data[24..]));
                data = data[32..];
            }
            while (data.Length >= 32);
            h = MergeLanes(v1, v2, v3, v4);
        }
        else
        {
            h = seed + P5;
        }
        h += (ulong)length;
        return Finish(h, data);
    }

    /// <summary>
    /// <see cref="Hash"/> of fewer than 32 bytes (keys, mostly) with selects instead of branches on the length:
    /// with keys of mixed lengths, the tail loops of <see cref="Finish"/> mispredicted on nearly every call, which
    /// made hashing a key four times slower. Every load stays inside <paramref name="data"/>; lanes past the end
    /// are loaded from an earlier position and their result discarded. Not inlined, so that its own helpers are.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static ulong HashShort(ReadOnlySpan<byte> data, ulong seed)
    {
        int length = data.Length;
        ulong h = seed + P5 + (ulong)length;
        ulong tail; // the last (length % 8) bytes, the first one lowest
        int tailLength;
        if (length >= 8)
        {
            int last = length - 8;
            h = Lane(h, Read64(data, 0));
            ulong next = Lane(h, Read64(data, last < 8 ? last : 8));
            h = length >= 16 ? next : h;
            next = Lane(h, Read64(data, last < 16 ? last : 16));
            h = length >= 24 ? next : h;
            tailLength = length & 7;
            // For tailLength 0 the shift is by 0 (shifts count mod 64); the tail is then unused.
            tail = Read64(data, last) >> (64 - (8 * tailLength));
        }
        else if (length >= 4)
        {
            // Two overlapping 4-byte loads cover 4..7 bytes.
            tail = Read32(data, 0) | ((ulong)Read32(data, length - 4) << (8 * (length - 4)));
            tailLength = length;
        }
        else if (length > 0)
        {
            tail = data[0] | ((ulong)data[length >> 1] << (8 * (length >> 1))) | ((ulong)data[length - 1] << (8 * (length - 1)));
            tailLength = length;
        }
        else
        {
            return Avalanche(h);
        }
        bool four = tailLength >= 4;
        ulong afterFour = BitOperations.RotateLeft(h ^ ((tail & 0xFFFF_FFFF) * P1), 23) * P2 + P3;
        h = four ? afterFour : h;
        tail = four ? tail >> 32 : tail;
        int bytes = tailLength & 3;
        ulong afterByte = ByteStep(h, tail);
        h = bytes > 0 ? afterByte : h;
        afterByte = ByteStep(h, tail >> 8);
        h = bytes > 1 ? afterByte : h;
        afterByte = ByteStep(h, tail >> 16);
        h = bytes > 2 ? afterByte : h;
        return Avalanche(h);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Lane(ulong h, ulong lane) => (BitOperations.RotateLeft(h ^ Round(0, lane), 27) * P1) + P4;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong ByteStep(ulong h, ulong bytes) => BitOperations.RotateLeft(h ^ ((bytes & 0xFF) * P5), 11) * P1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Read64(ReadOnlySpan<byte> data, int offset) => BinaryPrimitives.ReadUInt64LittleEndian(data[offset..]);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static uint Read32(ReadOnlySpan<byte> data, int offset) => BinaryPrimitives.ReadUInt32LittleEndian(data[offset..]);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Avalanche(ulong h)
    {
        h ^= h >> 33;
        h *= P2;
        h ^= h >> 29;
        h *= P3;
        h ^= h >> 32;
        return h;
    }

    private void Stripe(ReadOnlySpan<byte> data)
    {
        _v1 = Round(_v1, BinaryPrimitives.ReadUInt64LittleEndian(data));
        _v2 = Round(_v2, BinaryPrimitives.ReadUInt64LittleEndian(data[8..]));
        _v3 = Round(_v3, BinaryPrimitives.ReadUInt64LittleEndian(data[16..]));
        _v4 = Round(_v4, BinaryPrimitives.ReadUInt64LittleEndian(data[24..]));
    }

    private static ulong MergeLanes(ulong v1, ulong v2, ulong v3, ulong v4)
    {
        ulong h = BitOperations.RotateLeft(v1, 1) + BitOperations.RotateLeft(v2, 7)
                + BitOperations.RotateLeft(v3, 12) + BitOperations.RotateLeft(v4, 18);
        h = MergeRound(h, v1);
        h = MergeRound(h, v2);
        h = MergeRound(h, v3);
        return MergeRound(h, v4);
    }

    private static ulong Finish(ulong h, ReadOnlySpan<byte> tail)
    {
        while (tail.Length >= 8)
        {
            h ^= Round(0, BinaryPrimitives.ReadUInt64LittleEndian(tail));
            h = BitOperations.RotateLeft(h, 27) * P1 + P4;
            tail = tail[8..];
        }
        if (tail.Length >= 4)
        {
            h ^= BinaryPrimitives.ReadUInt32LittleEndian(tail) * P1;
            h = BitOperations.RotateLeft(h, 23) * P2 + P3;
            tail = tail[4..];
        }
        foreach (byte b in tail)
        {
            h ^= b * P5;
            h = BitOperations.RotateLeft(h, 11) * P1;
        }
        return Avalanche(h);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Round(ulong acc, ulong lane) => BitOperations.RotateLeft(acc + lane * P2, 31) * P1;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong MergeRound(ulong acc, ulong v) => (acc ^ Round(0, v)) * P1 + P4;
}

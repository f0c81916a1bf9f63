using System.Numerics;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// Send buffers of one server, by size class (four per power of two, so a steady stream's window plus two segments,
/// 146 KB, takes 160 KB rather than 256 KB, all of which it touches), kept for reuse: a stream holds a buffer only while it
/// has bytes not yet acknowledged, so thousands of mostly idle streams (R = N) share a few buffers, and a steady
/// stream keeps its own. At most <see cref="FreeBytesLimit"/> bytes are kept free (default 8 MB, the simulator's
/// packet-buffer budget per server); the rest go back to the GC. Measured on 8x8x8: at R = 1 the limit is never
/// reached; at R = 512 a 256 KB limit made 25 GB of allocations instead of 15 GB and a third more GC time.
/// Single-threaded, like the transport that owns it.
/// </summary>
public sealed class SendBufferPool
{
    private const int MinShift = 9; // 512 bytes
    private const int Classes = 61; // four per power of two, 512 bytes up to 16 MiB

    private readonly Stack<byte[]>[] _free = new Stack<byte[]>[Classes];

    public SendBufferPool(long freeBytesLimit = 8 * 1024 * 1024)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(freeBytesLimit);
        FreeBytesLimit = freeBytesLimit;
    }

    /// <summary>Most bytes kept in free buffers.</summary>
    public long FreeBytesLimit { get; }

    /// <summary>Bytes held in free buffers, ready for reuse.</summary>
    public long FreeBytes { get; private set; }

    /// <summary>Bytes held in buffers that are handed out.</summary>
    public long RentedBytes { get; private set; }

    /// <summary>Buffers ever allocated (not reused).</summary>
    public long Allocated { get; private set; }

    /// <summary>A buffer of at least <paramref name="minimumLength"/> bytes (at least 512; a power of two times 1, 1.25, 1.5 or 1.75).</summary>
    public byte[] Rent(int minimumLength)
    {
        int c = ClassOf(minimumLength);
        var stack = _free[c];
        byte[] buffer;
        if (stack is not null && stack.Count > 0)
        {
            buffer = stack.Pop();
            FreeBytes -= buffer.Length;
        }
        else
        {
            buffer = GC.AllocateUninitializedArray<byte>(SizeOf(c));
            Allocated++;
        }
        RentedBytes += buffer.Length;
        return buffer;
    }

    public void Return(byte[] buffer)
    {
        ArgumentNullException.ThrowIfNull(buffer);
        int c = ClassOf(buffer.Length);
        if (SizeOf(c) != buffer.Length)
        {
            throw new ArgumentException("not a buffer of this pool", nameof(buffer));
        }
        RentedBytes -= buffer.Length;
        if (FreeBytes + buffer.Length > FreeBytesLimit)
        {
            return;
        }
        FreeBytes += buffer.Length;
        (_free[c] ??= new Stack<byte[]>()).Push(buffer);
    }

    /// <summary>The size of class <paramref name="c"/>: a power of two times 1, 1.25, 1.5 or 1.75.</summary>
    private static int SizeOf(int c) => (4 + (c & 3)) << ((c >> 2) + MinShift - 2);

    /// <summary>The smallest class whose size holds <paramref name="length"/> bytes.</summary>
    private static int ClassOf(int length)
    {
        if (length <= 1 << MinShift)
        {
            return 0;
        }
        // length - 1 lies in [2^b, 2^(b+1)): the class is 2^b times q/4 for the smallest q in 5..8 that holds it.
        int b = 31 - BitOperations.LeadingZeroCount((uint)(length - 1));
        int q = (int)((((long)length << 2) + (1L << b) - 1) >> b);
        int c = ((b - MinShift) << 2) + q - 4;
        if (c >= Classes)
        {
            throw new ArgumentOutOfRangeException(nameof(length), length, "send buffers are at most 16 MiB");
        }
        return c;
    }
}

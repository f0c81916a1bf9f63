using System.Numerics;

namespace Camdoop.MapReduce.Buffers;

/// <summary>
/// The shuffle's byte buffers on one server, by size class (four per power of two, so a steady stream's window plus
/// two segments, 146 KB, takes 160 KB rather than 256 KB, all of which it touches), kept for reuse: send buffers (a
/// stream holds one only while it has bytes not yet acknowledged), children's stashes, and the input buffers of the
/// vertices' mergers (grown on demand, trimmed when a merger goes back to its pool). Thousands of mostly idle
/// streams (R = N) share a few buffers, and a steady stream keeps its own. A rent takes a free buffer of up to three
/// classes larger before it allocates. At most <see cref="FreeBytesLimit"/> bytes are kept free (default 16 MB:
/// twice the simulator's packet-buffer budget per server, about what one server of 8x8x8 R = 512 has rented at its
/// peak, since minimum windows overcommit the budget); the rest go back to the GC. Measured on 8x8x8 R = 512 S = 0
/// noagg: pooling the merger inputs and this limit took the run from 17.9 GB allocated (17.2 GB peak heap) to
/// 14.4 GB (14.2 GB); with an 8 MB limit 7.8 GB of returned buffers were dropped and allocated again.
/// Single-threaded, like the transport that owns it.
/// </summary>
public sealed class ShuffleBufferPool
{
    private const int MinShift = 9; // 512 bytes
    private const int Classes = 61; // four per power of two, 512 bytes up to 16 MiB

    private readonly Stack<byte[]>[] _free = new Stack<byte[]>[Classes];

    public ShuffleBufferPool(long freeBytesLimit = 16 * 1024 * 1024)
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

    /// <summary>
    /// The most bytes handed out at once: the packet-buffer memory this server's shuffle needed, to set against the
    /// budget (minimum windows and the mergers' inputs overcommit it at R = N).
    /// </summary>
    public long PeakRentedBytes { get; private set; }

    /// <summary>Buffers ever allocated (not reused).</summary>
    public long Allocated { get; private set; }

    /// <summary>A buffer of at least <paramref name="minimumLength"/> bytes (at least 512; a power of two times 1, 1.25, 1.5 or 1.75).</summary>
    public byte[] Rent(int minimumLength)
    {
        int c = ClassOf(minimumLength);
        byte[] buffer;
        // A free buffer of up to three classes larger (at most 1.75 times the size) beats a new one.
        int free = c;
        int top = Math.Min(c + 3, Classes - 1);
        while (free < top && _free[free] is not { Count: > 0 })
        {
            free++;
        }
        if (_free[free] is { Count: > 0 } stack)
        {
            buffer = stack.Pop();
            FreeBytes -= buffer.Length;
        }
        else
        {
            // On the pinned object heap: pooled buffers live long, and the GC would otherwise copy the small ones
            // (below 85 KB) as it promotes them; 8x8x8 R = 512 S = 0 noagg took 50.4 s instead of 52.9 s (GC pauses
            // 6.2 s instead of 9.2 s, means of three runs each).
            buffer = GC.AllocateUninitializedArray<byte>(SizeOf(c), pinned: true);
            Allocated++;
        }
        RentedBytes += buffer.Length;
        PeakRentedBytes = Math.Max(PeakRentedBytes, RentedBytes);
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

    /// <summary>The length of the buffer <see cref="Rent"/> gives for <paramref name="minimumLength"/> bytes.</summary>
    public static int SizeFor(int minimumLength) => SizeOf(ClassOf(minimumLength));

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

using System.Runtime.CompilerServices;
using System.Runtime.Intrinsics.X86;

namespace Camdoop.MapReduce.Records;

/// <summary>Cache hints for loops that visit bytes in an order the hardware prefetcher cannot follow.</summary>
internal static class CacheLine
{
    /// <summary>
    /// Asks for the cache line holding <paramref name="address"/>. A hint only: it never faults, so a stale address
    /// (had the GC moved the array) costs nothing.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static unsafe void Prefetch(ref byte address)
    {
        if (Sse.IsSupported)
        {
            Sse.Prefetch0(Unsafe.AsPointer(ref address));
        }
    }
}

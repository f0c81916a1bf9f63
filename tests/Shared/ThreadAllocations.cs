namespace Camdoop.Tests.Shared;

/// <summary>
/// Bytes the test thread allocates in a stretch of work. The runtime itself now and then allocates a few KB on the
/// test thread (7 KB seen under load), so a zero-allocation claim takes the least of several passes: an allocation
/// per event or per record would show in every pass.
/// </summary>
internal static class ThreadAllocations
{
    /// <summary>The least bytes allocated by <paramref name="pass"/> (given its number, 1 on) over up to <paramref name="passes"/> passes; stops at the first zero.</summary>
    public static long LeastOf(int passes, Action<int> pass)
    {
        long least = long.MaxValue;
        for (int i = 1; i <= passes && least > 0; i++)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            pass(i);
            least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
        }
        return least;
    }
}

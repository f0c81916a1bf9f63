using System.Runtime.InteropServices;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// CPU time consumed by the calling thread (Linux CLOCK_THREAD_CPUTIME_ID), so a benchmark on a shared machine
/// can report throughput per core independent of time spent descheduled. NaN elsewhere.
/// </summary>
public static partial class ThreadCpuClock
{
    private const int ClockThreadCpuTimeId = 3;

    public static double Seconds()
    {
        if (!OperatingSystem.IsLinux())
        {
            return double.NaN;
        }
        Span<long> timespec = stackalloc long[2];
        return clock_gettime(ClockThreadCpuTimeId, ref timespec[0]) == 0 ? timespec[0] + timespec[1] / 1e9 : double.NaN;
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int clock_gettime(int clockId, ref long timespec);
}

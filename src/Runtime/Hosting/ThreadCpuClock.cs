using System.Runtime.InteropServices;

namespace Camdoop.Runtime.Hosting;

/// <summary>
/// CPU time of the calling thread (Linux <c>clock_gettime(CLOCK_THREAD_CPUTIME_ID)</c>), so that a simulation counts
/// the CPU of its own threads: the process's CPU also holds whatever runs beside it (a sweep runs simulations side by
/// side, and maps the next input while one runs). Not available elsewhere: callers fall back to the process's CPU.
/// </summary>
public static partial class ThreadCpuClock
{
    private const int ClockThreadCpuTime = 3; // CLOCK_THREAD_CPUTIME_ID

    public static bool IsAvailable { get; } = OperatingSystem.IsLinux() && Probe();

    /// <summary>The calling thread's CPU time so far in nanoseconds (user and system), or 0 when not available.</summary>
    public static long Nanoseconds()
    {
        if (!IsAvailable || ClockGetTime(ClockThreadCpuTime, out var time) != 0)
        {
            return 0;
        }
        return (time.Seconds * 1_000_000_000) + time.Nanoseconds;
    }

    /// <summary>The calling thread's CPU time so far in seconds, or NaN when not available.</summary>
    public static double Seconds() => IsAvailable ? Nanoseconds() / 1e9 : double.NaN;

    private static bool Probe()
    {
        try
        {
            return ClockGetTime(ClockThreadCpuTime, out _) == 0;
        }
        catch (Exception e) when (e is DllNotFoundException or EntryPointNotFoundException)
        {
            return false;
        }
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, out Timespec time);
}

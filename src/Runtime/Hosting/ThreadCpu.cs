using System.Globalization;

namespace Camdoop.Runtime.Hosting;

/// <summary>CPU time of one Linux thread of this process, from /proc (for per-node accounting in probes).</summary>
public static class ThreadCpu
{
    /// <summary>Nanoseconds thread <paramref name="tid"/> has run (user + system); 0 when unknown.</summary>
    public static long Nanoseconds(int tid)
    {
        if (tid <= 0)
        {
            return 0;
        }
        try
        {
            // schedstat: "<ns on cpu> <ns waiting> <timeslices>", precise to the nanosecond.
            var text = File.ReadAllText($"/proc/self/task/{tid}/schedstat");
            int space = text.IndexOf(' ', StringComparison.Ordinal);
            if (space > 0 && long.TryParse(text.AsSpan(0, space), NumberStyles.None, CultureInfo.InvariantCulture, out long ns))
            {
                return ns;
            }
        }
        catch (IOException)
        {
        }
        try
        {
            // stat: utime and stime are fields 14 and 15, in clock ticks of 10 ms; the name field may contain spaces.
            var stat = File.ReadAllText($"/proc/self/task/{tid}/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            long ticks = long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
            return ticks * 10_000_000;
        }
        catch (IOException)
        {
            return 0;
        }
    }
}

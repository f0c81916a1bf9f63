using Camdoop.Runtime.Hosting;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// The smallest thread CPU time (<see cref="ThreadCpuClock"/>) seen per operation over a benchmark's invocations:
/// the per-core figure the benchmarks print at cleanup, steadier on a shared machine than wall-clock means.
/// </summary>
public sealed class BestCpuTimes
{
    private readonly Dictionary<string, double> _best = [];

    /// <summary>Seconds of thread CPU time per operation name, best first seen.</summary>
    public IReadOnlyDictionary<string, double> Seconds => _best;

    /// <summary>Notes one run of <paramref name="operation"/> that began at <paramref name="started"/> (<see cref="ThreadCpuClock.Seconds"/>).</summary>
    public void Record(string operation, double started)
    {
        double seconds = ThreadCpuClock.Seconds() - started;
        if (!double.IsNaN(seconds) && (!_best.TryGetValue(operation, out double best) || seconds < best))
        {
            _best[operation] = seconds;
        }
    }

    public void Clear() => _best.Clear();
}

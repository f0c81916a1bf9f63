namespace Camdoop.Monitoring.Metrics;

/// <summary>
/// Turns a server's counters, as status.json groups and names them, into its metric samples through
/// <see cref="MetricCatalog"/>. A counter no metric covers is left out (a test keeps the catalog complete).
/// </summary>
public static class MetricSamples
{
    /// <summary>Adds every counter of every group ("node", "chunkStore", ...).</summary>
    public static void AddGroups(List<MetricSample> samples, IReadOnlyDictionary<string, IReadOnlyDictionary<string, long>> groups)
    {
        ArgumentNullException.ThrowIfNull(groups);
        foreach (var (group, counters) in groups)
        {
            foreach (var (key, value) in counters)
            {
                Add(samples, group, key, value);
            }
        }
    }

    /// <summary>Adds one port's fields ("framesSent", "up", ...), labelled with the port's name.</summary>
    public static void AddPort(List<MetricSample> samples, string port, IReadOnlyDictionary<string, long> fields)
    {
        ArgumentNullException.ThrowIfNull(port);
        ArgumentNullException.ThrowIfNull(fields);
        foreach (var (key, value) in fields)
        {
            Add(samples, "link", key, value, port);
        }
    }

    /// <summary>Adds status.json's <paramref name="group"/>.<paramref name="key"/>; <paramref name="label"/> is the port of a link field.</summary>
    public static void Add(List<MetricSample> samples, string group, string key, long value, string? label = null)
    {
        ArgumentNullException.ThrowIfNull(samples);
        if (MetricCatalog.TryMap(group, key, out var metric, out string reason))
        {
            samples.Add(new MetricSample(metric, label ?? reason, value / metric.Divisor));
        }
    }
}

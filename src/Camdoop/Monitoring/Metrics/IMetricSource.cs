namespace Camdoop.Monitoring.Metrics;

/// <summary>
/// Where the metrics table reads a server's counters, on its event loop: the node host's and services' on every
/// server (simulated or real), and a real node adds its process's own (links' kernel drops, the front-end's).
/// </summary>
public interface IMetricSource
{
    /// <summary>Appends every series of the server, as they are now.</summary>
    void Read(List<MetricSample> samples);
}

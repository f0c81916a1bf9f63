namespace Camdoop.Monitoring.Metrics;

/// <summary>How a metric moves: a counter only grows (from the process's start), a gauge goes up and down.</summary>
public enum MetricKind
{
    Counter,
    Gauge,
}

namespace Camdoop.Monitoring.Metrics;

/// <summary>One series' value on one server: its metric, its label's value ("" when the metric has no label), in the metric's unit.</summary>
public readonly record struct MetricSample(MetricDefinition Metric, string Label, double Value);

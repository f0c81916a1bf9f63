namespace Camdoop.Monitoring.Metrics;

/// <summary>One series of the whole cube: the server it is from ("" for the front-end's own), its metric, label value and value.</summary>
public readonly record struct CubeSample(string Server, string Metric, string Label, double Value);

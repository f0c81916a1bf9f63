namespace Camdoop.Monitoring.Metrics;

/// <summary>
/// One metric a server exposes: its Prometheus name (a counter's ends in _total, a unit is spelled in the name),
/// kind, unit (UCUM, as System.Diagnostics.Metrics instruments carry it), help line, the name of its one label when
/// it has one ("port", "reason"), and how many of the counter's units it is read from make one of its own.
/// </summary>
public sealed record MetricDefinition(string Name, MetricKind Kind, string Unit, string Help)
{
    private const string CounterSuffix = "_total";

    /// <summary>The label that tells a server's series of this metric apart, or null when it has one series.</summary>
    public string? Label { get; init; }

    /// <summary>What the counter is divided by: 1e9 for nanoseconds read as seconds, say (a division rounds exactly).</summary>
    public double Divisor { get; init; } = 1;

    /// <summary>
    /// The System.Diagnostics.Metrics instrument's name: the Prometheus name without a counter's _total, which an
    /// exporter adds back, so that dotnet-counters and Prometheus show the same words.
    /// </summary>
    public string InstrumentName => Kind == MetricKind.Counter && Name.EndsWith(CounterSuffix, StringComparison.Ordinal)
        ? Name[..^CounterSuffix.Length]
        : Name;
}

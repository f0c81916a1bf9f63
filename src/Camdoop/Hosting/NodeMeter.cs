using System.Diagnostics.Metrics;
using System.Globalization;
using Camdoop.Monitoring.Metrics;
using Camdoop.Runtime.Topology;

namespace Camdoop.Hosting;

/// <summary>
/// A node's counters as System.Diagnostics.Metrics instruments on the meter "Camdoop.Node", for dotnet-counters,
/// OpenTelemetry or any MeterListener: one observable counter or gauge per metric of <see cref="MetricCatalog"/>,
/// each measurement tagged with the server and the metric's label (port, reason). The server is spelled x-y-z, as the
/// testbed names its namespaces, not x,y,z: dotnet-counters reads a measurement's tags as "k=v,k=v" and shows
/// nothing for a value with a comma in it (dotnet/diagnostics#5935). The instruments read the
/// latest status snapshot, which the status timer takes anyway (every statusIntervalMs, on the event loop): a
/// listener's collection costs the loop nothing and no frame pays anything, and the values are as old as that
/// snapshot at most. A metric the server has no counter for (a front-end's, on a server without one) reports nothing.
/// </summary>
public sealed class NodeMeter : IDisposable
{
    public const string MeterName = "Camdoop.Node";

    private static readonly Measurement<double>[] None = [];

    private readonly Meter _meter;
    private readonly string _server;
    private Dictionary<MetricDefinition, Measurement<double>[]> _latest = [];

    public NodeMeter(Coordinate server)
    {
        _server = ServerTag(server);
        _meter = new Meter(MeterName, typeof(NodeMeter).Assembly.GetName().Version?.ToString());
        foreach (var metric in MetricCatalog.All)
        {
            if (metric.Kind == MetricKind.Counter)
            {
                _meter.CreateObservableCounter(metric.InstrumentName, () => Observe(metric), metric.Unit, metric.Help);
            }
            else
            {
                _meter.CreateObservableGauge(metric.InstrumentName, () => Observe(metric), metric.Unit, metric.Help);
            }
        }
    }

    /// <summary>The server tag of <paramref name="server"/>'s measurements: "1-0-2".</summary>
    public static string ServerTag(Coordinate server) => string.Create(CultureInfo.InvariantCulture, $"{server.X}-{server.Y}-{server.Z}");

    /// <summary>The meter, for a listener that wants this node's instruments only.</summary>
    public Meter Meter => _meter;

    /// <summary>Takes <paramref name="samples"/> (a status snapshot's) as the values the instruments report from now on.</summary>
    public void Update(IReadOnlyList<MetricSample> samples)
    {
        ArgumentNullException.ThrowIfNull(samples);
        var server = new KeyValuePair<string, object?>("server", _server);
        var latest = new Dictionary<MetricDefinition, Measurement<double>[]>();
        foreach (var family in samples.GroupBy(s => s.Metric))
        {
            latest[family.Key] = [.. family.Select(s => s.Metric.Label is { } label
                ? new Measurement<double>(s.Value, server, new KeyValuePair<string, object?>(label, s.Label))
                : new Measurement<double>(s.Value, server))];
        }
        Volatile.Write(ref _latest, latest);
    }

    public void Dispose() => _meter.Dispose();

    private Measurement<double>[] Observe(MetricDefinition metric) =>
        Volatile.Read(ref _latest).GetValueOrDefault(metric) ?? None;
}

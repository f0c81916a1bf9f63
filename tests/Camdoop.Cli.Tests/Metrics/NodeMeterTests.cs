using System.Diagnostics.Metrics;
using Camdoop.FrontEnd.Wire;
using Camdoop.Hosting;
using Camdoop.Monitoring.Metrics;
using Camdoop.Monitoring.Queries;

namespace Camdoop.Cli.Tests.Metrics;

/// <summary>
/// The node's meter ("Camdoop.Node") in-process: a MeterListener sees one instrument per metric of the catalog, and
/// after known traffic (chunks stored, query rounds asked, front-end requests) reads the node's counters in them,
/// tagged with the server; and every counter of the node's status is one of the metrics.
/// </summary>
public sealed class NodeMeterTests : IDisposable
{
    private readonly OneNode _one = new();

    public void Dispose() => _one.Dispose();

    [Fact]
    public async Task AListenerReadsTheNodesCountersAfterKnownTraffic()
    {
        int[] sizes = [1_000, 2_000, 3_000];
        for (int i = 0; i < sizes.Length; i++)
        {
            _one.StoreChunk("metered", i, new byte[sizes[i]]);
        }
        var rounds = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int seen = 0;
        var monitor = _one.Node.Stack!.Monitor!;
        _one.Node.Loop.Post(() => monitor.Ask(QueryParser.Parse("select count(*) from links every 10ms"), _ =>
        {
            if (++seen == 4)
            {
                rounds.SetResult();
            }
        }, rounds: 4));
        await rounds.Task.WaitAsync(TimeSpan.FromSeconds(30));
        using (var client = _one.Connect())
        {
            for (int i = 0; i < 5; i++)
            {
                client.Call(new HelloRequest());
            }
        }

        // The meter reads the status snapshot, taken every 100 ms here: wait for one taken after the traffic.
        Dictionary<(string Instrument, string Label), double> values = [];
        WaitUntil(() =>
        {
            values = Collect(_one.Node.Meter.Meter, out var servers);
            Assert.Equal(["0-0-0"], servers);
            return values.GetValueOrDefault(("camdoop_monitor_rounds", "")) == 4 && values.GetValueOrDefault(("camdoop_frontend_requests", "")) >= 5;
        });
        Assert.Equal(3, values[("camdoop_chunk_store_replicas", "")]);
        Assert.Equal(6_000, values[("camdoop_chunk_store_stored_bytes", "")]);
        Assert.Equal(3, values[("camdoop_chunk_store_replicas_stored", "")]);
        Assert.True(values[("camdoop_frontend_connections", "")] >= 1);
        Assert.True(values[("camdoop_process_cpu_seconds", "")] > 0);
        Assert.Equal(0, values[("camdoop_links_up", "")]);
        // No port is cabled: each port's series is there, and zero.
        foreach (string port in new[] { "+X", "-X", "+Y", "-Y", "+Z", "-Z" })
        {
            Assert.Equal(0, values[("camdoop_link_frames_sent", port)]);
            Assert.Equal(0, values[("camdoop_link_up", port)]);
        }
        Assert.Equal(0, values[("camdoop_node_frames_rejected_by_reason", "bad_flags")]);
    }

    [Fact]
    public void EveryMetricOfTheCatalogIsAnInstrumentWithItsUnitAndHelp()
    {
        var instruments = new List<Instrument>();
        using (var listener = new MeterListener())
        {
            listener.InstrumentPublished = (instrument, _) =>
            {
                if (ReferenceEquals(instrument.Meter, _one.Node.Meter.Meter))
                {
                    instruments.Add(instrument);
                }
            };
            listener.Start();
        }
        Assert.Equal(NodeMeter.MeterName, _one.Node.Meter.Meter.Name);
        Assert.Equal(MetricCatalog.All.Select(m => m.InstrumentName), instruments.Select(i => i.Name));
        foreach (var (metric, instrument) in MetricCatalog.All.Zip(instruments))
        {
            Assert.Equal(metric.Unit, instrument.Unit);
            Assert.Equal(metric.Help, instrument.Description);
            Assert.Equal(metric.Kind == MetricKind.Counter, instrument is ObservableCounter<double>);
            Assert.Equal(metric.Kind == MetricKind.Gauge, instrument is ObservableGauge<double>);
        }
    }

    [Fact]
    public async Task EveryCounterOfTheNodesStatusIsAMetric()
    {
        _one.Node.Web!.Sessions.IssueLoginCode();
        var status = await _one.Node.StatusAsync();
        Assert.Superset(new HashSet<string> { "node", "process", "routing", "ping", "chunkStore", "camdoop", "monitor", "jobControl", "frontEnd", "web" }, status.Counters.Keys.ToHashSet());
        foreach (var (group, counters) in status.Counters)
        {
            Assert.All(counters.Keys, key => Assert.True(MetricCatalog.TryMap(group, key, out _, out _), $"status.json counter {group}.{key} is no metric"));
        }
        // Every number of a port's status is a link metric.
        var numbers = typeof(LinkStatus).GetProperties().Where(p => p.PropertyType == typeof(long) || p.PropertyType == typeof(bool)).Select(p => char.ToLowerInvariant(p.Name[0]) + p.Name[1..]);
        var fields = NodeStatusMetrics.Fields(status.Links[0]);
        Assert.Equal(numbers.Order(), fields.Keys.Order());
        Assert.All(fields.Keys, key => Assert.True(MetricCatalog.TryMap("link", key, out _, out _), $"link field {key} is no metric"));
        var samples = NodeStatusMetrics.Read(status);
        Assert.Equal(samples.Count, samples.Select(s => (s.Metric.Name, s.Label)).Distinct().Count());
    }

    /// <summary>
    /// One collection of <paramref name="meter"/>'s observable instruments: each measurement by instrument and by its
    /// label other than the server ("" for none), and the servers the measurements were tagged with.
    /// </summary>
    internal static Dictionary<(string Instrument, string Label), double> Collect(Meter meter, out IReadOnlyList<string> servers)
    {
        var values = new Dictionary<(string, string), double>();
        var tagged = new SortedSet<string>(StringComparer.Ordinal);
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (ReferenceEquals(instrument.Meter, meter))
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) =>
        {
            string label = "";
            foreach (var tag in tags)
            {
                if (tag.Key == "server")
                {
                    tagged.Add((string)tag.Value!);
                }
                else
                {
                    label = (string)tag.Value!;
                }
            }
            values[(instrument.Name, label)] = value;
        });
        listener.Start();
        listener.RecordObservableInstruments();
        servers = [.. tagged];
        return values;
    }

    private static void WaitUntil(Func<bool> condition)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!condition())
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), "the meter did not show the traffic within 30 s");
            Thread.Sleep(50);
        }
    }
}

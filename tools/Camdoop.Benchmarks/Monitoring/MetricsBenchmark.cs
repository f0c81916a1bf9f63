using System.Diagnostics.Metrics;
using BenchmarkDotNet.Attributes;
using Camdoop.Hosting;
using Camdoop.Monitoring.Metrics;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Benchmarks.Monitoring;

/// <summary>
/// What the metrics cost, where they cost it, on a simulated 3x3x3 cube running every server's stack. On the event
/// loop, once per /metrics round and never per frame: a server reading its series for the metrics table
/// (<see cref="ReadServerSeries"/>). Off the loop: the front-end formatting the 27 servers' series
/// (<see cref="FormatCubeExposition"/>), the status timer handing a snapshot's series to the node's meter
/// (<see cref="UpdateMeter"/>), and a listener such as dotnet-counters collecting the meter (<see cref="CollectMeter"/>).
/// </summary>
[MemoryDiagnoser]
public class MetricsBenchmark
{
    private readonly List<MetricSample> _samples = [];
    private readonly List<CubeSample> _cube = [];
    private string _data = "";
    private Simulation _sim = null!;
    private ServerMetricSource _source = null!;
    private NodeMeter _meter = null!;
    private MeterListener _listener = null!;
    private double _collected;

    [GlobalSetup]
    public void Setup()
    {
        _data = Directory.CreateTempSubdirectory("camdoop-metrics-bench-").FullName;
        var torus = new Torus(3, 3, 3);
        _sim = new Simulation(new SimulationOptions { Torus = torus, DataRoot = _data }, host => ServerStack.OnTorus(host));
        _sim.Start();
        _sim.RunUntil(500 * SimTime.Millisecond);
        foreach (var server in torus.All())
        {
            var samples = new List<MetricSample>();
            new ServerMetricSource(_sim.Host(server)).Read(samples);
            _cube.AddRange(samples.Select(s => new CubeSample(server.Name, s.Metric.Name, s.Label, s.Value)));
        }
        _source = new ServerMetricSource(_sim.Host(new Coordinate(1, 1, 1)));
        _source.Read(_samples);
        _meter = new NodeMeter(new Coordinate(1, 1, 1));
        _meter.Update(_samples);
        _listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (ReferenceEquals(instrument.Meter, _meter.Meter))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            },
        };
        _listener.SetMeasurementEventCallback<double>((_, value, _, _) => _collected += value);
        _listener.Start();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _listener.Dispose();
        _meter.Dispose();
        _sim.Dispose();
        Directory.Delete(_data, recursive: true);
    }

    [Benchmark]
    public int ReadServerSeries()
    {
        _samples.Clear();
        _source.Read(_samples);
        return _samples.Count;
    }

    [Benchmark]
    public int FormatCubeExposition() => PrometheusText.Format(_cube).Length;

    [Benchmark]
    public void UpdateMeter() => _meter.Update(_samples);

    [Benchmark]
    public double CollectMeter()
    {
        _listener.RecordObservableInstruments();
        return _collected;
    }
}

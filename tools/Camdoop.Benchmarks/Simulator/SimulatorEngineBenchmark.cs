using System.Diagnostics;
using System.Globalization;
using BenchmarkDotNet.Attributes;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Benchmarks.Simulator;

/// <summary>
/// Simulator throughput on an 8x8x8 cube (3,072 directed links) where every server saturates its six links with
/// neighbour traffic. Each operation is one processed event, so events per second = 1e9 / Mean (ns); nearly all
/// of them are frame events (transmit complete, arrival), the rest beacon timers. Target: 5 M frame events/s.
/// </summary>
[MemoryDiagnoser]
public class SimulatorEngineBenchmark
{
    private const int EventsPerInvoke = 1_000_000;

    private Simulation _sim = null!;
    private long _framesBefore;
    private long _eventsBefore;
    private TimeSpan _wallBefore;
    private TimeSpan _cpuBefore;

    /// <summary>64: engine and host overhead; 8988: jumbo frames, including the 9 KB copy into each frame.</summary>
    [Params(64, 8988)]
    public int PayloadBytes { get; set; }

    [Params(16, 64)]
    public int QueueCapacity { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var options = new SimulationOptions
        {
            Torus = new Torus(8, 8, 8),
            Node = SimulationOptions.DefaultNodeOptions with { QueueCapacity = QueueCapacity },
        };
        _sim = new Simulation(options, h => h.Register(new NeighbourFloodService(PayloadBytes)));
        _sim.Start();
        _sim.RunUntil(SimTime.Millisecond); // fill queues, rings and the frame pool
        _framesBefore = _sim.FrameEventsProcessed;
        _eventsBefore = _sim.EventsProcessed;
        _wallBefore = _sim.WallTime;
        _cpuBefore = Process.GetCurrentProcess().TotalProcessorTime;
    }

    [Benchmark(OperationsPerInvoke = EventsPerInvoke)]
    public long ProcessEvents() => _sim.RunEvents(EventsPerInvoke);

    [GlobalCleanup]
    public void Cleanup()
    {
        long events = _sim.EventsProcessed - _eventsBefore;
        long frames = _sim.FrameEventsProcessed - _framesBefore;
        double seconds = (_sim.WallTime - _wallBefore).TotalSeconds;
        // CPU time of the process over the same span: on a shared machine wall time also counts time spent descheduled.
        double cpuSeconds = (Process.GetCurrentProcess().TotalProcessorTime - _cpuBefore).TotalSeconds;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"// payload {PayloadBytes} B, queues {QueueCapacity}: {events:N0} events ({frames / (double)events:P2} frame events) in {seconds:F2} s wall, {cpuSeconds:F2} s CPU = {frames / seconds / 1e6:F2} M frame events/s wall, {frames / cpuSeconds / 1e6:F2} M/s CPU; virtual time {SimTime.Format(_sim.Now)}; frames pooled {_sim.Frames.Created:N0}"));
        _sim.Dispose();
    }
}

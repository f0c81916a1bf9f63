using System.Diagnostics;
using System.Globalization;
using BenchmarkDotNet.Attributes;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Benchmarks.KeyRouting;

/// <summary>
/// An 8x8x8 cube under key-routed load: every server sends frames to random keys as fast as its queues allow, and
/// each invocation simulates half a millisecond more of it. Prints simulator events per second (of wall time and of
/// process CPU time, which discounts other processes on a shared machine) and the frames delivered, at the end.
/// The load's queues hold 16 frames per port (not the default 64) to keep 512 servers' pooled jumbo buffers in memory bounds.
/// </summary>
[MemoryDiagnoser]
public class KeyRoutedLoadBenchmark
{
    private const long SimulatedPerInvocation = SimTime.Millisecond / 2;
    private const int LoadQueueCapacity = 16;

    private Simulation _sim = null!;
    private long _events;
    private long _frameEvents;
    private long _wallTicks;
    private TimeSpan _cpu;
    private long _simulated;

    [Params(64, 1024)]
    public int PayloadBytes { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _sim = new Simulation(new SimulationOptions { Torus = new Torus(8, 8, 8), Seed = 7 }, host =>
        {
            KeyRoutingService.Install(host);
            host.Register(new KeyRoutedLoadService(PayloadBytes, (ulong)host.Torus.IndexOf(host.Self) + 1), LoadQueueCapacity);
        });
        _sim.Start();
        _sim.RunFor(SimTime.Millisecond); // reach steady state
    }

    [Benchmark]
    public long SimulateHalfAMillisecond()
    {
        long events = _sim.EventsProcessed;
        long frameEvents = _sim.FrameEventsProcessed;
        var cpu = Process.GetCurrentProcess().TotalProcessorTime;
        long started = Stopwatch.GetTimestamp();
        _sim.RunFor(SimulatedPerInvocation);
        _wallTicks += Stopwatch.GetTimestamp() - started;
        _cpu += Process.GetCurrentProcess().TotalProcessorTime - cpu;
        _events += _sim.EventsProcessed - events;
        _frameEvents += _sim.FrameEventsProcessed - frameEvents;
        _simulated += SimulatedPerInvocation;
        return _sim.EventsProcessed;
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        double wall = Stopwatch.GetElapsedTime(0, _wallTicks).TotalSeconds;
        long sent = 0, received = 0, forwarded = 0, dropped = 0;
        foreach (var c in _sim.Torus.All())
        {
            var host = _sim.Host(c);
            var load = host.GetService<KeyRoutedLoadService>()!;
            var routing = host.GetService<KeyRoutingService>()!;
            sent += load.Sent;
            received += load.Received;
            forwarded += routing.Counters.Forwarded;
            dropped += routing.Counters.DroppedForward + routing.Counters.DroppedNoRoute + routing.Counters.DroppedTtl;
        }
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"// KeyRoutedLoad payload={PayloadBytes}B: {_events / wall / 1e6:0.00} M events/s, {_frameEvents / wall / 1e6:0.00} M frame events/s of wall time, " +
            $"{_frameEvents / _cpu.TotalSeconds / 1e6:0.00} M frame events/s of CPU time " +
            $"({_frameEvents:N0} frame events in {wall:0.00} s wall, {_cpu.TotalSeconds:0.00} s CPU, for {_simulated / 1e6:0.#} ms simulated); " +
            $"whole run: sent {sent:N0}, delivered {received:N0}, forwarded {forwarded:N0}, dropped in transit {dropped:N0}"));
        _sim.Dispose();
    }
}

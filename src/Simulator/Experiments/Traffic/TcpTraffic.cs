using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments.Traffic;

/// <summary>
/// TCP flows between servers of a simulated switched network: every server runs the node's <see cref="TcpService"/>,
/// each flow is one connection carrying a checkable byte pattern. For TCP's known behaviours (line rate, fair shares,
/// incast) and for the switched simulation's speed.
/// </summary>
public sealed class TcpTraffic : IDisposable
{
    private readonly TcpTrafficOptions _options;
    private readonly PatternSink?[] _sinks;
    private readonly long[] _completion;
    private readonly TcpConnection?[] _connections;
    private int _done;

    public TcpTraffic(TcpTrafficOptions options)
    {
        _options = options;
        int flows = options.Flows.Count;
        _sinks = new PatternSink?[flows];
        _completion = new long[flows];
        Array.Fill(_completion, -1L);
        _connections = new TcpConnection?[flows];
        var torus = options.Torus;
        foreach (var f in options.Flows)
        {
            if (f.Source == f.Destination || (uint)f.Source >= torus.Count || (uint)f.Destination >= torus.Count || f.Bytes < 0)
            {
                throw new ArgumentException($"flow {f} is not between two servers of {torus}", nameof(options));
            }
        }
        // Flows are numbered by their order; a receiver learns a flow's number from (source, connection id), and
        // connection ids count up from 1 per source in flow order.
        var flowOf = new Dictionary<(int Source, uint Id), int>();
        var next = new uint[torus.Count];
        for (int i = 0; i < flows; i++)
        {
            flowOf[(options.Flows[i].Source, ++next[options.Flows[i].Source])] = i;
        }
        Simulation = new Simulation(new SimulationOptions
        {
            Torus = torus,
            Network = options.Network,
            LinkRateBitsPerSecond = options.LinkRateBitsPerSecond,
            Threads = options.Threads,
            Seed = options.Seed,
            Energy = options.Energy,
        });
        Simulation.Configure(host => host.Register(new TcpService(options.Tcp, (peer, id) =>
        {
            if (!flowOf.TryGetValue((torus.IndexOf(peer), id), out int flow) || options.Flows[flow].Destination != torus.IndexOf(host.Self))
            {
                return null;
            }
            // Each sink is touched only by its receiver's partition; completions are counted with an interlocked add.
            return _sinks[flow] = new PatternSink(flow, f =>
            {
                _completion[f] = host.Now;
                Interlocked.Increment(ref _done);
            }, options.CheckBytes);
        })));
    }

    public Simulation Simulation { get; }

    public bool AllDone => Volatile.Read(ref _done) == _options.Flows.Count;

    /// <summary>Payload bytes flow <paramref name="flow"/> has delivered so far.</summary>
    public long Delivered(int flow) => _sinks[flow]?.Received ?? 0;

    /// <summary>Boots the servers and opens every flow at time 0.</summary>
    public void Start()
    {
        Simulation.Start();
        var flows = _options.Flows;
        Simulation.ForEachServer(server =>
        {
            var tcp = Simulation.Host(server).GetService<TcpService>()!;
            for (int i = 0; i < flows.Count; i++)
            {
                if (flows[i].Source == server)
                {
                    _connections[i] = tcp.Open(Simulation.Torus.CoordinateOf(flows[i].Destination), new PatternSource(i, flows[i].Bytes, _options.CheckBytes));
                }
            }
        });
    }

    /// <summary>Starts, runs until every flow has delivered everything (or the time limit) and measures.</summary>
    public TcpTrafficResult Run()
    {
        var cpu = SimulationCpu.Start(Simulation);
        Start();
        Simulation.RunUntil(() => AllDone, _options.TimeLimit);
        return Measure(cpu.Seconds(Simulation));
    }

    public TcpTrafficResult Measure(double cpuSeconds)
    {
        long timeouts = 0, fast = 0, resent = 0;
        foreach (var c in _connections)
        {
            if (c is not null)
            {
                timeouts += c.Sender.Timeouts;
                fast += c.Sender.FastRetransmits;
                resent += c.Sender.SegmentsResent;
            }
        }
        long serverFrames = 0;
        foreach (var link in Simulation.Links)
        {
            if (link.FromIndex < Simulation.Torus.Count)
            {
                serverFrames += link.Frames;
            }
        }
        return new TcpTrafficResult
        {
            Duration = _completion.Length == 0 ? 0 : _completion.Max(),
            AllDone = AllDone,
            Completion = [.. _completion],
            PayloadBytes = _sinks.Sum(s => s?.Received ?? 0),
            CorruptBytes = _sinks.Sum(s => s?.Corrupt ?? 0),
            Timeouts = timeouts,
            FastRetransmits = fast,
            SegmentsResent = resent,
            SwitchDrops = Simulation.Switches.Sum(s => s.BufferDrops),
            EcnMarks = Simulation.Switches.Sum(s => s.EcnMarks),
            PacketHops = Simulation.LinkTotals.Frames,
            ServerFrames = serverFrames,
            Events = Simulation.EventsProcessed,
            CpuSeconds = cpuSeconds,
            WallTime = Simulation.WallTime,
        };
    }

    public void Dispose() => Simulation.Dispose();
}

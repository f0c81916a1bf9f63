using System.Buffers.Binary;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.KeyRouting.Tests.Simulation;

/// <summary>
/// A simulated cube where every server runs the key-routing service and a probe that sends and records routed
/// frames; plus the ground truth (failed links and servers from the simulator) to judge every server's view by.
/// </summary>
internal sealed class RoutedCube : IDisposable
{
    public const long Ms = SimTime.Millisecond;

    public RoutedCube(Torus torus, ulong seed = 1, Action<NodeHost>? extra = null)
    {
        Torus = torus;
        Sim = new Camdoop.Simulator.Network.Simulation(new SimulationOptions { Torus = torus, Seed = seed }, host =>
        {
            KeyRoutingService.Install(host);
            host.Register(new Probe());
            extra?.Invoke(host);
        });
        Sim.Start();
    }

    public Torus Torus { get; }

    public Camdoop.Simulator.Network.Simulation Sim { get; }

    public KeyRoutingService Routing(Coordinate c) => Sim.Host(c).GetService<KeyRoutingService>()!;

    public Probe ProbeAt(Coordinate c) => Sim.Host(c).GetService<Probe>()!;

    public IEnumerable<Coordinate> LiveServers => Torus.All().Where(c => !Sim.IsServerFailed(c));

    public bool TrulyLive(Coordinate c, Port p) =>
        !Sim.IsServerFailed(c) && !Sim.IsServerFailed(Torus.Neighbour(c, p)) && !Sim.IsLinkFailed(c, p);

    /// <summary>Hop counts over truly live links from <paramref name="source"/>; -1 when unreachable.</summary>
    public int[] TrueDistances(Coordinate source)
    {
        var dist = Enumerable.Repeat(-1, Torus.Count).ToArray();
        var queue = new Queue<Coordinate>();
        dist[Torus.IndexOf(source)] = 0;
        queue.Enqueue(source);
        while (queue.Count > 0)
        {
            var u = queue.Dequeue();
            foreach (var p in Ports.All)
            {
                var v = Torus.Neighbour(u, p);
                if (TrulyLive(u, p) && dist[Torus.IndexOf(v)] < 0)
                {
                    dist[Torus.IndexOf(v)] = dist[Torus.IndexOf(u)] + 1;
                    queue.Enqueue(v);
                }
            }
        }
        return dist;
    }

    /// <summary>Describes the first live server whose view of some link differs from the truth, or null when all agree.</summary>
    public string? FirstDisagreement()
    {
        foreach (var server in LiveServers)
        {
            var routing = Routing(server);
            foreach (var c in Torus.All())
            {
                foreach (var p in Ports.All)
                {
                    // Between two failed servers nobody is left to report the link: the view cannot know, and needs not.
                    bool unknowable = Sim.IsServerFailed(c) && Sim.IsServerFailed(Torus.Neighbour(c, p));
                    if (!unknowable && routing.IsLinkLive(c, p) != TrulyLive(c, p))
                    {
                        return $"{server} thinks link {c} {p.Name()} is {(routing.IsLinkLive(c, p) ? "live" : "dead")}";
                    }
                }
            }
        }
        return null;
    }

    /// <summary>The set of servers reachable over truly live links from <paramref name="from"/>.</summary>
    public ServerSet TrueReachable(Coordinate from)
    {
        var set = new ServerSet(Torus.Count);
        var dist = TrueDistances(from);
        for (int i = 0; i < dist.Length; i++)
        {
            if (dist[i] >= 0)
            {
                set.Add(i);
            }
        }
        return set;
    }

    public long Dropped(Func<KeyRoutingCounters, long> counter) => LiveServers.Sum(c => counter(Routing(c).Counters));

    public void Dispose() => Sim.Dispose();

    /// <summary>Sends key-routed or coordinate-routed frames carrying an id, and records what it receives.</summary>
    internal sealed class Probe : IService
    {
        private INodeContext _context = null!;

        public byte Id => 201;

        public string Name => "probe";

        public List<(long Id, Key Key, Coordinate Source, int Hops, bool KeyRouted)> Received { get; } = [];

        public void Start(INodeContext context) => _context = context;

        public SendStatus SendToKey(long id, in Key key)
        {
            Span<byte> payload = stackalloc byte[8];
            BinaryPrimitives.WriteInt64BigEndian(payload, id);
            return _context.GetService<KeyRoutingService>()!.Route(Id, key, payload, out _);
        }

        public void OnFrame(in InboundFrame frame)
        {
            var routing = _context.GetService<KeyRoutingService>()!;
            var key = frame.Header.IsKeyRouted ? Key.Read(frame.Key) : default;
            Received.Add((BinaryPrimitives.ReadInt64BigEndian(frame.Payload), key, frame.Header.Source, routing.HopsTravelled(frame), frame.Header.IsKeyRouted));
        }
    }
}

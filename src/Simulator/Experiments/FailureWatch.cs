using Camdoop.KeyRouting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>
/// Notes when servers' routing noticed injected failures: every server's key routing tells it (from the partitions'
/// threads, hence the lock) when servers became unreachable and when routes changed.
/// </summary>
internal sealed class FailureWatch
{
    private readonly Lock _lock = new();
    private readonly Dictionary<Coordinate, long> _lostAt = [];
    private readonly List<(Coordinate Server, long At)> _routeChanges = [];

    public void Attach(KeyRoutingService router, NodeHost host)
    {
        var listener = new Listener(this, host);
        router.AddOwnershipListener(listener);
        router.AddRouteListener(listener);
    }

    /// <summary>
    /// Each failure, at the time it was injected (<paramref name="injected"/>), with the first time a server noticed it
    /// (nothing noticed: null); times from <paramref name="t0"/>, the shuffle's start.
    /// </summary>
    public IReadOnlyList<FailureReport> Report(IReadOnlyList<InjectedFailure> failures, IReadOnlyDictionary<InjectedFailure, long> injected, Torus torus, long t0)
    {
        lock (_lock)
        {
            var reports = new List<FailureReport>();
            foreach (var f in failures)
            {
                long at = injected.TryGetValue(f, out long when) ? when : t0 + f.AtNanoseconds;
                long? detected = null;
                if (f.LinkPort is { } port)
                {
                    var peer = torus.Neighbour(f.Server, port);
                    foreach (var (server, time) in _routeChanges)
                    {
                        if (time >= at && (server == f.Server || server == peer) && (detected is null || time < detected))
                        {
                            detected = time;
                        }
                    }
                }
                else if (_lostAt.TryGetValue(f.Server, out long time) && time >= at)
                {
                    detected = time;
                }
                reports.Add(new FailureReport(f.What, f.IsLink ? null : f.Server.Name, f.IsLink ? f.Target : null, (at - t0) / 1e9,
                    detected is { } d ? (d - t0) / 1e9 : null));
            }
            return reports;
        }
    }

    private sealed class Listener(FailureWatch watch, NodeHost host) : IOwnershipListener, IRouteListener
    {
        public void OnOwnershipChanged(OwnershipChange change)
        {
            lock (watch._lock)
            {
                foreach (var server in change.BecameUnreachable)
                {
                    if (!watch._lostAt.TryGetValue(server, out long at) || host.Now < at)
                    {
                        watch._lostAt[server] = host.Now;
                    }
                }
            }
        }

        public void OnRoutesChanged()
        {
            lock (watch._lock)
            {
                watch._routeChanges.Add((host.Self, host.Now));
            }
        }
    }
}

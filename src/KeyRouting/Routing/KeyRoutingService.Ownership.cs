using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

// Route recomputation and ownership notifications. Link-state changes only mark the tables dirty; the next lookup,
// or a timer shortly after the first change, recomputes them once for the whole burst. Listeners hear from the
// timer, so never re-entrantly inside a send or a frame callback.
public sealed partial class KeyRoutingService
{
    private readonly List<IOwnershipListener> _listeners = [];
    private readonly List<IRouteListener> _routeListeners = [];
    private ServerSet _notified = null!;
    private bool _dirty;
    private bool _recomputeScheduled;
    private Action? _recompute;

    /// <summary>Registers a listener for reachable-set changes (see <see cref="IOwnershipListener"/> for the contract).</summary>
    public void AddOwnershipListener(IOwnershipListener listener)
    {
        ArgumentNullException.ThrowIfNull(listener);
        _listeners.Add(listener);
    }

    public bool RemoveOwnershipListener(IOwnershipListener listener) => _listeners.Remove(listener);

    /// <summary>Registers a listener for route changes (see <see cref="IRouteListener"/>).</summary>
    public void AddRouteListener(IRouteListener listener)
    {
        ArgumentNullException.ThrowIfNull(listener);
        _routeListeners.Add(listener);
    }

    private void MarkDirty()
    {
        _dirty = true;
        if (!_recomputeScheduled && _context is not null)
        {
            _recomputeScheduled = true;
            _context.SetTimer(_options.RecomputeDelay, _recompute ??= RecomputeAndNotify);
        }
    }

    private void EnsureFresh()
    {
        if (_dirty)
        {
            _dirty = false;
            _table.Compute(_db);
            Counters.Recomputations++;
        }
    }

    private void RecomputeAndNotify()
    {
        _recomputeScheduled = false;
        EnsureFresh();
        foreach (var listener in _routeListeners.ToArray())
        {
            try
            {
                listener.OnRoutesChanged();
            }
            // one listener's bug must not keep the others uninformed
            catch (Exception ex)
            {
                Context.Counters.ServiceFaults++;
                Context.Log(LogLevel.Error, $"route listener {listener.GetType().Name} failed: {ex}");
            }
        }
        var reachable = _table.Reachable;
        if (reachable.Equals(_notified))
        {
            return;
        }
        var lost = new List<Coordinate>();
        var regained = new List<Coordinate>();
        for (int i = 0; i < _torus.Count; i++)
        {
            bool now = reachable.Contains(i);
            if (now != _notified.Contains(i))
            {
                (now ? regained : lost).Add(_torus.CoordinateOf(i));
            }
        }
        _notified.CopyFrom(reachable);
        var change = new OwnershipChange(lost, regained, reachable.Count);
        foreach (var listener in _listeners.ToArray())
        {
            try
            {
                listener.OnOwnershipChanged(change);
            }
            // one listener's bug must not keep the others uninformed
            catch (Exception ex)
            {
                Context.Counters.ServiceFaults++;
                Context.Log(LogLevel.Error, $"ownership listener {listener.GetType().Name} failed: {ex}");
            }
        }
    }
}

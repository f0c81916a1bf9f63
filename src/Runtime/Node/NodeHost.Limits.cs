using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

// Rate limits: a token bucket per (service, port), checked by the port's round robin. A limited queue without tokens
// is passed over like an empty one, and the port sets one timer for when the first such bucket can send again.
public sealed partial class NodeHost
{
    private readonly long[] _limitWakeAt = [-1, -1, -1, -1, -1, -1];
    private readonly Action[] _limitWake = new Action[Ports.Count];

    /// <summary>
    /// Limits what service <paramref name="serviceId"/> sends on <paramref name="port"/> (originated and forwarded
    /// frames, whole frame bytes) to <paramref name="bytesPerSecond"/>; 0 removes the limit. Unknown services are ignored.
    /// </summary>
    public void SetRateLimit(byte serviceId, Port port, long bytesPerSecond)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytesPerSecond);
        if (_services[serviceId] is null)
        {
            return;
        }
        var queue = _portQueues[(int)port][_queueSlot[serviceId]];
        if (bytesPerSecond == 0)
        {
            queue.Limit = null;
        }
        else if (queue.Limit?.BytesPerSecond != bytesPerSecond)
        {
            queue.Limit = new TokenBucket(bytesPerSecond, Now);
        }
        // A lifted or raised limit may free frames at once.
        Pump(port);
    }

    /// <summary>The rate limit of service <paramref name="serviceId"/> on <paramref name="port"/> in bytes per second; 0 for none.</summary>
    public long RateLimit(byte serviceId, Port port) =>
        _services[serviceId] is null ? 0 : _portQueues[(int)port][_queueSlot[serviceId]].Limit?.BytesPerSecond ?? 0;

    /// <summary>Whether a limited queue's head may go now; if not, keeps the shortest wait in <paramref name="limitedFor"/>.</summary>
    private static bool HasTokens(TokenBucket bucket, int length, long now, ref long limitedFor)
    {
        long wait = bucket.WaitFor(length, now);
        if (wait == 0)
        {
            return true;
        }
        limitedFor = Math.Min(limitedFor, wait);
        return false;
    }

    /// <summary>Arms the port's timer for <paramref name="due"/> unless one already fires no later.</summary>
    private void WakeWhenTokensReturn(Port port, long due)
    {
        int p = (int)port;
        long armed = _limitWakeAt[p];
        if (armed >= 0 && armed <= due && armed >= Now)
        {
            return;
        }
        _limitWakeAt[p] = due;
        SetTimer(due - Now, _limitWake[p] ?? MakeWake(port));
    }

    // Apart from the caller: a lambda capturing a parameter allocates its closure on every call of its method.
    private Action MakeWake(Port port) => _limitWake[(int)port] = () => OnTokensReturned(port);

    private void OnTokensReturned(Port port)
    {
        if (_limitWakeAt[(int)port] <= Now)
        {
            _limitWakeAt[(int)port] = -1;
        }
        if (_halted)
        {
            return;
        }
        Pump(port);
        NotifySendReady(port);
    }
}

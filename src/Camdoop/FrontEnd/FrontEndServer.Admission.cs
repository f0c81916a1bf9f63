using System.Net;

namespace Camdoop.FrontEnd;

// Admission: connections that have not authenticated yet wait in a small pool of their own, apart from the sessions
// of clients that have. Nobody without the key can hold a session slot, and the pool cannot be held either: an
// address gets a few places in it at most, and when it is full the oldest connection in it makes way for the new one,
// provided it has had its grace (a second: a real client authenticates within a round trip). A connection still in
// its grace is never pushed out; when every one in the full pool is, the new connection is refused at once instead.
// So idle sockets are pushed out by newcomers, and a flood of newcomers cannot push out a client mid-handshake.
public sealed partial class FrontEndServer
{
    private readonly LinkedList<Handshake> _handshakes = new();
    private readonly Dictionary<IPAddress, int> _handshakesPerAddress = [];
    private long _evicted;
    private long _refusedPerAddress;
    private long _refusedPoolFull;

    /// <summary>Connections still authenticating that made way for a newer one when the pool was full.</summary>
    public long HandshakesEvicted => Interlocked.Read(ref _evicted);

    /// <summary>Connections refused because their address already had its share of the pool.</summary>
    public long RefusedPerAddress => Interlocked.Read(ref _refusedPerAddress);

    /// <summary>Connections refused because the pool was full of connections still in their grace.</summary>
    public long RefusedPoolFull => Interlocked.Read(ref _refusedPoolFull);

    /// <summary>
    /// A place in the pool for a new connection from <paramref name="address"/>, or null with the reason it is refused.
    /// When the pool is full the oldest connection in it, past its grace, is told to go (its handshake is cancelled).
    /// </summary>
    private (Handshake? Entry, string? Refusal) Admit(IPAddress? address)
    {
        Handshake? evicted = null;
        Handshake entry;
        long now = Environment.TickCount64;
        lock (_lock)
        {
            int fromAddress = address is null ? 0 : _handshakesPerAddress.GetValueOrDefault(address);
            if (fromAddress >= _options.MaxHandshakesPerAddress)
            {
                Interlocked.Increment(ref _refusedPerAddress);
                return (null, $"this address has {_options.MaxHandshakesPerAddress} connections authenticating already; try again later");
            }
            if (_handshakes.Count >= _options.MaxHandshakes)
            {
                var oldest = _handshakes.First!.Value;
                if (now - oldest.SinceMs < (long)_options.HandshakeGrace.TotalMilliseconds)
                {
                    Interlocked.Increment(ref _refusedPoolFull);
                    return (null, $"{_options.MaxHandshakes} connections are authenticating; try again later");
                }
                evicted = oldest;
                RemoveLocked(evicted);
            }
            entry = new Handshake(address, now);
            entry.Node = _handshakes.AddLast(entry);
            if (address is not null)
            {
                _handshakesPerAddress[address] = fromAddress + 1;
            }
        }
        if (evicted is not null)
        {
            Interlocked.Increment(ref _evicted);
            _refusals.Write($"front-end: {_options.MaxHandshakes} connections are authenticating; the oldest, from {evicted.Address}, makes way");
            evicted.Evict();
        }
        return (entry, null);
    }

    /// <summary>The connection left the pool: authenticated, refused or gone. Idempotent.</summary>
    private void Leave(Handshake entry)
    {
        lock (_lock)
        {
            RemoveLocked(entry);
        }
    }

    /// <summary>Takes a session slot for a connection that authenticated; false when every slot is taken.</summary>
    private bool TryTakeSession()
    {
        if (Interlocked.Increment(ref _active) <= _options.MaxConnections)
        {
            return true;
        }
        Interlocked.Decrement(ref _active);
        Interlocked.Increment(ref _refused);
        return false;
    }

    private void RemoveLocked(Handshake entry)
    {
        if (entry.Node?.List is null)
        {
            return;
        }
        _handshakes.Remove(entry.Node);
        if (entry.Address is { } address && _handshakesPerAddress.TryGetValue(address, out int n))
        {
            if (n <= 1)
            {
                _handshakesPerAddress.Remove(address);
            }
            else
            {
                _handshakesPerAddress[address] = n - 1;
            }
        }
    }

    /// <summary>A connection in the pool: its address, and the signal that makes it go.</summary>
    private sealed class Handshake(IPAddress? address, long sinceMs) : IDisposable
    {
        private readonly CancellationTokenSource _evict = new();

        public IPAddress? Address { get; } = address;

        /// <summary>When it joined the pool (<see cref="Environment.TickCount64"/>).</summary>
        public long SinceMs { get; } = sinceMs;

        public LinkedListNode<Handshake>? Node { get; set; }

        public CancellationToken Evicted => _evict.Token;

        public void Evict()
        {
            try
            {
                _evict.Cancel();
            }
            catch (ObjectDisposedException)
            {
                // It authenticated or left meanwhile.
            }
        }

        public void Dispose() => _evict.Dispose();
    }
}

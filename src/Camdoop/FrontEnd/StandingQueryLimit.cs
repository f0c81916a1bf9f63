using System.Globalization;
using System.Net;

namespace Camdoop.FrontEnd;

/// <summary>
/// How many monitoring queries a front-end runs for its clients at once, in all and per client address. Every query
/// costs each server of the cube a round of work per interval for as long as it runs, and a standing one (no round
/// limit) runs until its client goes, so they are bounded like connections: one client cannot take every place, and
/// the places in all stay below the front-end's connections, so that queries never hold every one of them.
/// A connection serves one request at a time, so it runs one query at most; the per-client cap counts the
/// connections from one address. Thread-safe.
/// </summary>
public sealed class StandingQueryLimit
{
    private readonly Lock _lock = new();
    private readonly Dictionary<IPAddress, int> _perClient = [];
    private int _running;
    private long _refused;

    public StandingQueryLimit(int maxQueries, int maxPerClient)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxQueries);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxPerClient);
        MaxQueries = maxQueries;
        MaxPerClient = maxPerClient;
    }

    /// <summary>No limit (sessions created without one).</summary>
    public static StandingQueryLimit Unlimited() => new(int.MaxValue, int.MaxValue);

    public int MaxQueries { get; }

    public int MaxPerClient { get; }

    /// <summary>Queries running now.</summary>
    public int Running
    {
        get
        {
            lock (_lock)
            {
                return _running;
            }
        }
    }

    /// <summary>Queries refused for either cap.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>
    /// Takes a place for a query of <paramref name="client"/> (null: an address unknown, counted in all only), or
    /// returns the one-line refusal naming the cap reached.
    /// </summary>
    public string? TryStart(IPAddress? client)
    {
        lock (_lock)
        {
            int fromClient = client is null ? 0 : _perClient.GetValueOrDefault(client);
            string? refusal = null;
            if (fromClient >= MaxPerClient)
            {
                refusal = string.Create(CultureInfo.InvariantCulture,
                    $"monitoring queries per client: this client ({client}) runs {fromClient} on this front-end, its limit; end one before starting another");
            }
            else if (_running >= MaxQueries)
            {
                refusal = string.Create(CultureInfo.InvariantCulture,
                    $"monitoring queries on this front-end: its clients run {_running}, its limit; try again later or ask another server's front-end");
            }
            if (refusal is not null)
            {
                Interlocked.Increment(ref _refused);
                return refusal;
            }
            _running++;
            if (client is not null)
            {
                _perClient[client] = fromClient + 1;
            }
            return null;
        }
    }

    /// <summary>Gives back the place <see cref="TryStart"/> took for <paramref name="client"/>.</summary>
    public void End(IPAddress? client)
    {
        lock (_lock)
        {
            if (_running == 0)
            {
                throw new InvalidOperationException("no query is running");
            }
            _running--;
            if (client is not null && _perClient.TryGetValue(client, out int n))
            {
                if (n <= 1)
                {
                    _perClient.Remove(client);
                }
                else
                {
                    _perClient[client] = n - 1;
                }
            }
        }
    }
}

using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

// Control plane: link-state advertisements. Every server starts assuming every link up, so a healthy cube floods
// nothing. A server advertises its six link bits when one changes; receivers keep the newest version per origin and
// re-flood news. When a link comes up both ends send their whole database over it (a rebooted server learns the
// current state), and a jittered periodic refresh does the same so that lost advertisements heal.
public sealed partial class KeyRoutingService
{
    private LinkStateDatabase _db = null!;
    private readonly bool[] _resyncPending = new bool[Ports.Count];
    private byte[] _scratch = [];
    private int[] _news = [];
    private int[] _stale = [];
    private int[] _exchange = [];
    private Action? _refresh;
    private TimerHandle _refreshTimer;
    private ulong _refreshRound;

    /// <summary>Whether, in this server's view, the link leaving <paramref name="server"/> through <paramref name="port"/> is live (both ends say up).</summary>
    public bool IsLinkLive(Coordinate server, Port port)
    {
        var neighbour = _torus.Neighbour(server, port);
        return _db.IsUp(_torus.IndexOf(server), (int)port) && _db.IsUp(_torus.IndexOf(neighbour), (int)port.Opposite());
    }

    /// <summary>The newest advertisement this server holds for <paramref name="server"/>.</summary>
    public LinkStateAdvertisement AdvertisementOf(Coordinate server) => _db.Get(_torus.IndexOf(server));

    public void OnFrame(in InboundFrame frame)
    {
        var context = Context;
        if (frame.IsLocal || (frame.Header.Flags & FrameFlags.Routed) != 0)
        {
            // Advertisements travel one hop only; anything else addressed to this service is not ours to read.
            Counters.MalformedControl++;
            return;
        }
        var payload = frame.Payload;
        int count = LinkStateMessage.TryReadCount(payload);
        if (count < 0)
        {
            Counters.MalformedControl++;
            return;
        }
        Counters.ControlFramesReceived++;
        int news = 0, stale = 0;
        bool reoriginate = false;
        for (int i = 0; i < count; i++)
        {
            if (!LinkStateMessage.TryReadEntry(payload, i, _torus, out var lsa))
            {
                Counters.MalformedControl++;
                continue;
            }
            var mine = _db.Get(lsa.Origin);
            if (lsa.IsNewerThan(mine))
            {
                if (lsa.Origin == _self)
                {
                    // Our previous life said more than we remember: outbid it with our current links.
                    _db.Set(lsa with { Links = mine.Links });
                    reoriginate = true;
                    continue;
                }
                _db.Set(lsa);
                Counters.AdvertisementsAccepted++;
                _news[news++] = lsa.Origin;
            }
            else if (mine.IsNewerThan(lsa))
            {
                _stale[stale++] = lsa.Origin;
            }
        }
        if (stale > 0)
        {
            SendEntries(frame.ArrivalPort, _stale.AsSpan(0, stale));
        }
        if (news > 0)
        {
            MarkDirty();
            for (int p = 0; p < Ports.Count; p++)
            {
                if (p != (int)frame.ArrivalPort && context.IsLinkUp((Port)p))
                {
                    SendEntries((Port)p, _news.AsSpan(0, news));
                }
            }
        }
        if (reoriginate)
        {
            Originate();
        }
    }

    public void OnLinkChanged(Port port, bool up)
    {
        if (_context is null)
        {
            return;
        }
        if (CurrentLinks() != _db.Links(_self))
        {
            Originate();
        }
        if (up)
        {
            SendDatabase(port);
        }
        else
        {
            _resyncPending[(int)port] = false;
        }
    }

    public void OnSendReady(Port port)
    {
        if (_resyncPending[(int)port])
        {
            _resyncPending[(int)port] = false;
            SendDatabase(port);
        }
    }

    private void StartLinkState()
    {
        var context = Context;
        int servers = _torus.Count;
        _db = new LinkStateDatabase(servers);
        _table = new RouteTable(_torus, _self);
        _notified = new ServerSet(servers);
        _scratch = new byte[FrameLayout.MaxPayload];
        _news = new int[servers];
        _stale = new int[servers];
        _exchange = new int[servers];
        // A boot epoch from the clock, so that a restarted server's advertisements outrank its previous life's;
        // should the clock not advance across restarts, receiving an own advertisement newer than ours fixes it up.
        _db.Set(new LinkStateAdvertisement(_self, (ulong)Math.Max(0, context.Now), 0, LinkStateAdvertisement.AllUp));
        if (CurrentLinks() != LinkStateAdvertisement.AllUp)
        {
            Originate();
        }
        _dirty = true;
        EnsureFresh();
        _notified.CopyFrom(_table.Reachable);
        if (_options.RefreshInterval > 0)
        {
            _refresh = Refresh;
            _refreshTimer = context.SetTimer((long)(KeyMapper.Mix(_selfSalt) % (ulong)_options.RefreshInterval), _refresh);
        }
    }

    private void StopLinkState()
    {
        if (_context is not null && _refreshTimer.IsSet)
        {
            _context.CancelTimer(_refreshTimer);
            _refreshTimer = default;
        }
    }

    private byte CurrentLinks()
    {
        var context = Context;
        byte links = 0;
        for (int p = 0; p < Ports.Count; p++)
        {
            if (context.IsLinkUp((Port)p))
            {
                links |= (byte)(1 << p);
            }
        }
        return links;
    }

    /// <summary>Issues a new version of this server's own advertisement and floods it.</summary>
    private void Originate()
    {
        var context = Context;
        var own = _db.Get(_self);
        _db.Set(new LinkStateAdvertisement(_self, own.Epoch, own.Sequence + 1, CurrentLinks()));
        Counters.AdvertisementsOriginated++;
        MarkDirty();
        Span<int> origin = [_self];
        for (int p = 0; p < Ports.Count; p++)
        {
            if (context.IsLinkUp((Port)p))
            {
                SendEntries((Port)p, origin);
            }
        }
    }

    /// <summary>Sends every advertisement this server holds, its own always included, to the neighbour on <paramref name="port"/>.</summary>
    private void SendDatabase(Port port)
    {
        var advertised = _db.Advertised;
        int n = 0;
        _exchange[n++] = _self;
        for (int i = 0; i < advertised.Count; i++)
        {
            if (advertised[i] != _self)
            {
                _exchange[n++] = advertised[i];
            }
        }
        SendEntries(port, _exchange.AsSpan(0, n));
    }

    /// <summary>Sends the current entries of <paramref name="origins"/> on one link, as many frames as they need.</summary>
    private void SendEntries(Port port, ReadOnlySpan<int> origins)
    {
        var context = Context;
        if (!context.IsLinkUp(port))
        {
            return;
        }
        var neighbour = _torus.Neighbour(context.Self, port);
        while (!origins.IsEmpty)
        {
            int n = Math.Min(origins.Length, LinkStateMessage.MaxEntries);
            var payload = _scratch.AsSpan(0, LinkStateMessage.SizeFor(n));
            LinkStateMessage.WriteHeader(payload, n);
            for (int i = 0; i < n; i++)
            {
                LinkStateMessage.WriteEntry(payload, i, _torus, _db.Get(origins[i]));
            }
            var header = new FrameHeader(Id, context.Self, neighbour, FrameFlags.None, ttl: 1);
            var status = context.TrySend(port, ref header, default, payload);
            if (status == SendStatus.Queued)
            {
                Counters.ControlFramesSent++;
            }
            else if (status == SendStatus.QueueFull)
            {
                // Lost news would wait for the next refresh; resend everything as soon as the queue drains.
                _resyncPending[(int)port] = true;
                return;
            }
            origins = origins[n..];
        }
    }

    private void Refresh()
    {
        var context = Context;
        for (int p = 0; p < Ports.Count; p++)
        {
            if (context.IsLinkUp((Port)p))
            {
                SendDatabase((Port)p);
            }
        }
        // Jitter each interval by ±25%, from a hash of (server, round): deterministic, and servers drift apart.
        long interval = _options.RefreshInterval;
        ulong spread = (ulong)(interval / 2) + 1;
        long delay = (interval - (interval / 4)) + (long)(KeyMapper.Mix(_selfSalt ^ ++_refreshRound) % spread);
        _refreshTimer = context.SetTimer(delay, _refresh!);
    }
}

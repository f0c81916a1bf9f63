namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A receiving end's (a reducer's, an interior vertex's) admission of its children's streams: a few of them send at
/// once, and the next child is admitted as room frees. Bounded this way, the streams converging on one receiver's
/// link cannot overflow the switch queue in front of it (incast), which under push costs each dropped tail a
/// retransmission timeout many times the transfer.
/// <para>
/// With a fixed bound (<c>--parallel-fetches</c>) it is a count. An automatic bound is a byte budget, the switch
/// buffer the receiver assumes: each admitted stream reserves its first flight (TCP's initial window, or the
/// longest stream seen so far if that is shorter), so the first flights of all the admitted streams fit in the
/// queue together. A stream that is no longer than a window sends all it has in that flight, so what of it has
/// arrived no longer needs room and the next child is admitted while the stream is still arriving: short streams
/// (R = N) then overlap the admission's delay instead of waiting for each other to end. A long stream goes on
/// sending after its first flight and keeps its reservation until it ends. A reducer whose children are all leaves
/// starts from its own local runs' length as the guess: every server's map output for a reduce task is drawn from
/// the same keys.
/// </para>
/// </summary>
internal sealed class Admission
{
    private readonly Queue<(int Sender, int Tree)> _waiting;

    // Admitted children whose streams have not ended, with the bytes that have arrived of each.
    private readonly Dictionary<(int Sender, int Tree), long> _admitted = [];
    private readonly Action<int, int> _admit;
    private readonly int _bound;
    private readonly long _budget;
    private readonly int _window;
    private long _longest;
    private long _reserved;

    /// <param name="children">The children (host index, tree), in the order they are admitted.</param>
    /// <param name="bound">Streams admitted at once: exactly, without a budget; at least, with one.</param>
    /// <param name="admit">Tells a child (host index, tree) to send.</param>
    /// <param name="budgetBytes">For an automatic bound, the switch buffer the receiver assumes; 0 keeps <paramref name="bound"/>.</param>
    /// <param name="windowBytes">TCP's initial window: what a long stream sends before its first acknowledgement.</param>
    /// <param name="guessBytes">How long the children's streams are likely to be before any has been seen; 0: unknown.</param>
    public Admission(IEnumerable<(int Sender, int Tree)> children, int bound, Action<int, int> admit, long budgetBytes = 0, int windowBytes = 0,
        long guessBytes = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bound);
        ArgumentOutOfRangeException.ThrowIfNegative(budgetBytes);
        _waiting = new Queue<(int, int)>(children);
        _bound = bound;
        _admit = admit;
        _budget = budgetBytes;
        _window = Math.Max(1, windowBytes);
        _longest = Math.Max(0, guessBytes);
    }

    /// <summary>Children told to send whose streams have not ended.</summary>
    public int Admitted => _admitted.Count;

    /// <summary>Children not yet told to send.</summary>
    public int Waiting => _waiting.Count;

    /// <summary>Bytes of the budget the admitted streams hold.</summary>
    public long Reserved => _reserved;

    // A stream's first flight: an initial window, or less when every stream seen so far was shorter.
    private long Flight => _longest == 0 ? _window : Math.Min(_window, _longest);

    // Streams no longer than a window send everything in their first flight.
    private bool Short => _longest > 0 && _longest <= _window;

    private long Reservation(long arrived) => Short ? Math.Max(0, Flight - arrived) : Flight;

    /// <summary>Admits the first children.</summary>
    public void Start() => AdmitMore();

    /// <summary>
    /// <paramref name="bytes"/> have arrived so far of <paramref name="sender"/>'s stream of <paramref name="tree"/>:
    /// a short stream's room frees as it arrives.
    /// </summary>
    public void OnReceived(int sender, int tree, long bytes)
    {
        if (_budget == 0 || !_admitted.TryGetValue((sender, tree), out long before) || bytes <= before)
        {
            return;
        }
        _admitted[(sender, tree)] = bytes;
        // A stream longer than any seen says streams are longer than thought; with none seen yet, the first bytes of
        // one say nothing of its length, and every stream is taken as long.
        if (_longest > 0 && bytes > _longest)
        {
            bool recount = _longest < _window;
            _longest = bytes;
            if (recount)
            {
                Recount();
                AdmitMore();
                return;
            }
        }
        _reserved -= Reservation(before) - Reservation(bytes);
        AdmitMore();
    }

    /// <summary>The stream of <paramref name="sender"/>'s <paramref name="tree"/> ended after <paramref name="bytes"/>: the next child may send.</summary>
    public void OnEnded(int sender, int tree, long bytes)
    {
        if (_admitted.Remove((sender, tree), out long arrived))
        {
            _reserved -= Reservation(arrived);
            if (bytes > _longest)
            {
                _longest = bytes;
                Recount();
            }
            AdmitMore();
        }
    }

    /// <summary><paramref name="node"/> failed: its slot (or its place in the queue) goes to the others.</summary>
    public void Forget(int node)
    {
        foreach (var child in _admitted.Keys.Where(c => c.Sender == node).ToList())
        {
            _admitted.Remove(child);
        }
        if (_waiting.Any(c => c.Sender == node))
        {
            var rest = _waiting.Where(c => c.Sender != node).ToList();
            _waiting.Clear();
            foreach (var child in rest)
            {
                _waiting.Enqueue(child);
            }
        }
        Recount();
        AdmitMore();
    }

    // The flights changed with the longest stream seen: every reservation is taken again.
    private void Recount()
    {
        _reserved = 0;
        foreach (long arrived in _admitted.Values)
        {
            _reserved += Reservation(arrived);
        }
    }

    private void AdmitMore()
    {
        while (_waiting.Count > 0 && (_admitted.Count < _bound || (_budget > 0 && _reserved + Flight <= _budget)))
        {
            var child = _waiting.Dequeue();
            _admitted.Add(child, 0);
            _reserved += Flight;
            _admit(child.Sender, child.Tree);
        }
    }
}

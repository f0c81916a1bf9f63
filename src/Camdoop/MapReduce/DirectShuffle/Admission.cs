namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A receiving end's (a reducer's, an interior vertex's) admission of its children's streams: at most
/// <see cref="Bound"/> of them send at once, and as each admitted stream ends the next child is admitted. Bounded
/// this way, the streams converging on one receiver's link cannot overflow the switch queue in front of it (incast),
/// which under push costs each dropped tail a retransmission timeout many times the transfer. An automatic bound
/// grows as streams end: a stream's first flight is at most its length, so once the receiver has seen how long its
/// children's streams are (the longest so far), as many of them as the buffer holds may start together; short
/// streams (R = N) then overlap their connection set-up instead of waiting for each other. A reducer whose children
/// are all leaves starts from its own local runs' length as the guess: every server's map output for a
/// reduce task is drawn from the same keys.
/// </summary>
internal sealed class Admission
{
    private readonly Queue<(int Sender, int Tree)> _waiting;
    private readonly HashSet<(int Sender, int Tree)> _admitted = [];
    private readonly Action<int, int> _admit;
    private readonly int _bound;
    private readonly long _budget;
    private readonly int _window;
    private readonly int _most;
    private long _longest;

    /// <param name="children">The children (host index, tree), in the order they are admitted.</param>
    /// <param name="bound">Streams admitted at once.</param>
    /// <param name="admit">Tells a child (host index, tree) to send.</param>
    /// <param name="budgetBytes">
    /// For an automatic bound, the switch buffer the receiver assumes: the bound becomes as many of the longest
    /// stream so far (or <paramref name="windowBytes"/>, if less) as it holds, never below <paramref name="bound"/>;
    /// 0 keeps <paramref name="bound"/>.
    /// </param>
    /// <param name="windowBytes">TCP's initial window: what a long stream sends before its first acknowledgement.</param>
    /// <param name="guessBytes">How long the children's streams are likely to be before any has ended; 0: unknown.</param>
    /// <param name="mostAtOnce">
    /// The most an automatic bound grows to: every admission opens a connection to its child, and at R = N all the
    /// receivers admit at once, so the admissions themselves converge on each sender.
    /// </param>
    public Admission(IEnumerable<(int Sender, int Tree)> children, int bound, Action<int, int> admit, long budgetBytes = 0, int windowBytes = 0,
        long guessBytes = 0, int mostAtOnce = int.MaxValue)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bound);
        ArgumentOutOfRangeException.ThrowIfNegative(budgetBytes);
        _waiting = new Queue<(int, int)>(children);
        _bound = bound;
        _admit = admit;
        _budget = budgetBytes;
        _window = Math.Max(1, windowBytes);
        _longest = Math.Max(0, guessBytes);
        _most = Math.Max(bound, mostAtOnce);
    }

    /// <summary>Streams admitted at once now.</summary>
    public int Bound => _budget == 0 || _longest == 0 ? _bound
        : (int)Math.Clamp(_budget / Math.Min(_window, _longest), _bound, _most);

    /// <summary>Children told to send whose streams have not ended.</summary>
    public int Admitted => _admitted.Count;

    /// <summary>Children not yet told to send.</summary>
    public int Waiting => _waiting.Count;

    /// <summary>Admits the first children.</summary>
    public void Start() => AdmitMore();

    /// <summary>The stream of <paramref name="sender"/>'s <paramref name="tree"/> ended after <paramref name="bytes"/>: the next child may send.</summary>
    public void OnEnded(int sender, int tree, long bytes)
    {
        if (_admitted.Remove((sender, tree)))
        {
            _longest = Math.Max(_longest, Math.Max(1, bytes));
            AdmitMore();
        }
    }

    /// <summary><paramref name="node"/> failed: its slot (or its place in the queue) goes to the others.</summary>
    public void Forget(int node)
    {
        _admitted.RemoveWhere(c => c.Sender == node);
        if (_waiting.Any(c => c.Sender == node))
        {
            var rest = _waiting.Where(c => c.Sender != node).ToList();
            _waiting.Clear();
            foreach (var child in rest)
            {
                _waiting.Enqueue(child);
            }
        }
        AdmitMore();
    }

    private void AdmitMore()
    {
        while (_admitted.Count < Bound && _waiting.TryDequeue(out var child))
        {
            _admitted.Add(child);
            _admit(child.Sender, child.Tree);
        }
    }
}

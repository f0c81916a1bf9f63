namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A receiving end's (a reducer's, an interior vertex's) admission of its children's streams: at most
/// <see cref="Bound"/> of them send at once, and as each admitted stream ends the next child is admitted. Bounded
/// this way, the streams converging on one receiver's link cannot overflow the switch queue in front of it (incast),
/// which under push costs each dropped tail a retransmission timeout many times the transfer.
/// </summary>
internal sealed class Admission
{
    private readonly Queue<(int Sender, int Tree)> _waiting;
    private readonly HashSet<(int Sender, int Tree)> _admitted = [];
    private readonly Action<int, int> _admit;

    /// <param name="children">The children (host index, tree), in the order they are admitted.</param>
    /// <param name="bound">Streams admitted at once.</param>
    /// <param name="admit">Tells a child (host index, tree) to send.</param>
    public Admission(IEnumerable<(int Sender, int Tree)> children, int bound, Action<int, int> admit)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bound);
        _waiting = new Queue<(int, int)>(children);
        Bound = bound;
        _admit = admit;
    }

    public int Bound { get; }

    /// <summary>Children told to send whose streams have not ended.</summary>
    public int Admitted => _admitted.Count;

    /// <summary>Children not yet told to send.</summary>
    public int Waiting => _waiting.Count;

    /// <summary>Admits the first children.</summary>
    public void Start() => AdmitMore();

    /// <summary>The stream of <paramref name="sender"/>'s <paramref name="tree"/> ended: the next child may send.</summary>
    public void OnEnded(int sender, int tree)
    {
        if (_admitted.Remove((sender, tree)))
        {
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

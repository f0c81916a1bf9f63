using System.Diagnostics;

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// The live inputs of a <see cref="StreamMerger"/> (not yet exhausted: unfinished, or finished with records left),
/// and how many of them wait for bytes. A mutable struct, held in a field of the merger and used in place.
/// <para>
/// Invariants: the first <see cref="Count"/> members are distinct inputs, exactly those that are live, and each live
/// input knows its place among them; their order changes only when an input leaves (the last member takes its place)
/// or joins (at the end), so scans over them, and the order in which they fold values, are deterministic.
/// <see cref="Waiting"/> counts the live inputs without a complete record: an input joins without one, gains and
/// loses one through <see cref="HeadFound"/> and <see cref="HeadLost"/>, and leaves with <see cref="Leave"/> saying
/// which it was.
/// </para>
/// </summary>
internal struct LiveInputs
{
    private readonly int[] _members;
    private readonly int[] _places; // -1: not live
    private int _count;
    private int _waiting;

    public LiveInputs(int inputs)
    {
        _members = new int[inputs];
        _places = new int[inputs];
        _places.AsSpan().Fill(-1);
    }

    public readonly int Count => _count;

    /// <summary>Live inputs without a complete record: while any, nothing can be emitted safely.</summary>
    public readonly int Waiting => _waiting;

    /// <summary>The live input at <paramref name="index"/> (below <see cref="Count"/>).</summary>
    public readonly int this[int index] => _members[index];

    /// <summary>The live inputs, for a scan that does not change them.</summary>
    public readonly ReadOnlySpan<int> Members => _members.AsSpan(0, _count);

    public readonly bool Contains(int input) => _places[input] >= 0;

    /// <summary>Where <paramref name="input"/> is among the live inputs (-1: not live): the order scans visit them in.</summary>
    public readonly int PlaceOf(int input) => _places[input];

    /// <summary>Every input live and waiting, in index order.</summary>
    public void Reset()
    {
        _count = 0;
        _waiting = 0;
        _places.AsSpan().Fill(-1);
        for (int i = 0; i < _members.Length; i++)
        {
            Join(i);
        }
    }

    /// <summary>Makes <paramref name="input"/> live, waiting for bytes.</summary>
    public void Join(int input)
    {
        Debug.Assert(_places[input] < 0, "an input joins once");
        _places[input] = _count;
        _members[_count++] = input;
        _waiting++;
    }

    /// <summary>
    /// Removes an exhausted input; <paramref name="waiting"/> tells whether it was counted as waiting (it ended while
    /// waiting for bytes) or not (it just consumed its last record).
    /// </summary>
    public void Leave(int input, bool waiting)
    {
        int place = _places[input];
        Debug.Assert(place >= 0, "only a live input leaves");
        int last = _members[--_count];
        _members[place] = last;
        _places[last] = place;
        _places[input] = -1;
        if (waiting)
        {
            _waiting--;
        }
    }

    /// <summary>A waiting input now has a complete record.</summary>
    public void HeadFound()
    {
        Debug.Assert(_waiting > 0, "a waiting input found a head");
        _waiting--;
    }

    /// <summary>A live input used up its complete records but may receive more.</summary>
    public void HeadLost() => _waiting++;
}

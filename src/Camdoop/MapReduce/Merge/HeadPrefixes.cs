using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// The head key prefix of each input of a <see cref="StreamMerger"/>, one 64-bit lane per input, and the scans for
/// the smallest. Most comparisons of a merge are one compare of these integers (<see cref="MergeInput.PrefixAt"/>).
/// <para>
/// Invariants: lane i holds input i's head prefix while input i has a head, and <see cref="ulong.MaxValue"/> while it
/// has none (waiting for bytes, or exhausted); under a job-defined key order every head's prefix is 0, so all
/// comparisons go to the comparer. There are at least 8 lanes, and the lanes past the inputs always hold
/// <see cref="ulong.MaxValue"/>, so up to 8 inputs scan as one <see cref="Vector512{T}"/> with no mask. A head whose
/// key begins with eight 0xFF bytes holds <see cref="ulong.MaxValue"/> too: a minimum of <see cref="ulong.MaxValue"/>
/// proves nothing, and the merger takes its general path for it.
/// </para>
/// <para>
/// Past <see cref="TournamentInputs"/> inputs a <see cref="PrefixTournament"/> mirrors the lanes, and the scans read
/// it instead (log2 of the inputs per record rather than every lane); they answer exactly as the lane scans do.
/// </para>
/// </summary>
internal readonly struct HeadPrefixes
{
    /// <summary>
    /// Inputs past which the tournament replaces the lane scans: up to 8 the lanes are one AVX-512 vector, which beats
    /// the tree's walks (MergeFanInBenchmark, 8 inputs: 2.3 against 4.3 ms); past 8 the scan is scalar and the tree
    /// wins from 9 inputs on (4.6 against 6.8 ms) and more so with every input (512: 18 against 233 ms).
    /// </summary>
    public const int TournamentInputs = 8;

    private readonly ulong[] _lanes;
    private readonly PrefixTournament? _tournament;

    /// <param name="inputs">How many inputs the merger has.</param>
    /// <param name="tournament">Whether to keep a <see cref="PrefixTournament"/>; null: past <see cref="TournamentInputs"/>.</param>
    public HeadPrefixes(int inputs, bool? tournament = null)
    {
        _lanes = new ulong[inputs <= 8 ? 8 : inputs];
        _lanes.AsSpan().Fill(ulong.MaxValue);
        if (tournament ?? inputs > TournamentInputs)
        {
            _tournament = new PrefixTournament(_lanes.Length);
        }
    }

    /// <summary>Whether the scans read a <see cref="PrefixTournament"/> rather than every lane.</summary>
    public bool HasTournament => _tournament is not null;

    /// <summary>Lanes scanned: the inputs, padded to 8.</summary>
    public int Length => _lanes.Length;

    /// <summary>Whether the lanes are one <see cref="Vector512{T}"/> and the hardware handles it.</summary>
    public bool FitOneVector => StreamMerger.UsesVector512 && _lanes.Length == 8 && _tournament is null;

    public ulong this[int input] => _lanes[input];

    /// <summary>Sets input <paramref name="input"/>'s lane (unchecked: an input's index is below the lane count).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void Set(int input, ulong prefix)
    {
        Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_lanes), input) = prefix;
        _tournament?.Set(input, prefix);
    }

    /// <summary>Input <paramref name="input"/> has no head.</summary>
    public void Clear(int input)
    {
        _lanes[input] = ulong.MaxValue;
        _tournament?.Set(input, ulong.MaxValue);
    }

    /// <summary>
    /// The input with the smallest prefix (the lowest index among equals) and how many lanes hold it, from memory;
    /// with a tournament, <paramref name="ties"/> is 1 or 2 (two or more), all the merger asks when the minimum is
    /// below <see cref="ulong.MaxValue"/>. Requires every live input to have a head. Scalar on purpose: the lanes
    /// were just stored one at a time, and a vector load would stall on store forwarding (the fast loop keeps its own
    /// copy in a register: <see cref="Load"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int ScanMin(out ulong min, out int ties)
    {
        if (_tournament is { } tournament)
        {
            int winner = tournament.Min(out min);
            ties = tournament.MinExcept(winner) == min ? 2 : 1;
            return winner;
        }
        ref ulong p0 = ref MemoryMarshal.GetArrayDataReference(_lanes);
        int count = _lanes.Length;
        ulong best = p0;
        int index = 0;
        for (int i = 1; i < count; i++)
        {
            ulong v = Unsafe.Add(ref p0, i);
            long less = -(long)(v < best ? 1 : 0);
            best ^= (best ^ v) & (ulong)less;
            index ^= (index ^ i) & (int)less;
        }
        int same = 0;
        for (int i = 0; i < count; i++)
        {
            same += Unsafe.Add(ref p0, i) == best ? 1 : 0;
        }
        min = best;
        ties = same;
        return index;
    }

    /// <summary>The smallest prefix of the inputs other than <paramref name="m"/>, from memory.</summary>
    public ulong SecondMin(int m)
    {
        if (_tournament is { } tournament)
        {
            return tournament.MinExcept(m);
        }
        var lanes = _lanes;
        ulong best = ulong.MaxValue;
        for (int i = 0; i < lanes.Length; i++)
        {
            ulong v = lanes[i];
            best = i != m && v < best ? v : best;
        }
        return best;
    }

    /// <summary>
    /// With a tournament, writes the inputs whose lane holds <paramref name="prefix"/> into <paramref name="into"/>
    /// (at least <see cref="Length"/> long, in no particular order) and returns how many; -1 without one.
    /// </summary>
    public int CollectEqual(ulong prefix, Span<int> into) => _tournament is { } tournament ? tournament.CollectEqual(prefix, into) : -1;

    /// <summary>
    /// The 8 lanes as a vector (only when <see cref="FitOneVector"/>), built from scalar loads: the lanes were just
    /// stored one by one, so one 64-byte load would stall.
    /// </summary>
    public Vector512<ulong> Load()
    {
        var p = _lanes;
        return Vector512.Create(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    }

    // ---- The same scans on 8 lanes held in a register (the fast loop keeps them there between records) ----

    /// <summary>The lane with the smallest prefix in <paramref name="prefixes"/> and how many lanes hold it: one horizontal minimum and one compare mask.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ScanMin(Vector512<ulong> prefixes, out ulong min, out int ties)
    {
        var m = MinOfLanes(prefixes);
        ulong mask = Vector512.Equals(prefixes, m).ExtractMostSignificantBits();
        min = m.ToScalar();
        ties = BitOperations.PopCount(mask);
        return BitOperations.TrailingZeroCount(mask);
    }

    /// <summary>
    /// The smallest prefix of the lanes other than <paramref name="m"/>, and the lanes holding it
    /// (<paramref name="lanes"/> holds 0 to 7).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong SecondMin(Vector512<ulong> prefixes, Vector512<ulong> lanes, int m, out uint holders)
    {
        var others = WithLane(prefixes, lanes, m, ulong.MaxValue);
        var min = MinOfLanes(others);
        // Lanes of input m and of finished inputs hold ulong.MaxValue: they count only when that is the minimum, and a
        // key never passes ulong.MaxValue, so no run moves to them.
        holders = (uint)Vector512.Equals(others, min).ExtractMostSignificantBits();
        return min.ToScalar();
    }

    /// <summary><paramref name="prefixes"/> with lane <paramref name="m"/> set to <paramref name="value"/> (<paramref name="lanes"/> holds 0 to 7).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Vector512<ulong> WithLane(Vector512<ulong> prefixes, Vector512<ulong> lanes, int m, ulong value) =>
        Vector512.ConditionalSelect(Vector512.Equals(lanes, Vector512.Create((ulong)m)), Vector512.Create(value), prefixes);

    /// <summary>The smallest of the eight lanes, in every lane (three shuffle-and-min steps).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Vector512<ulong> MinOfLanes(Vector512<ulong> v)
    {
        v = Vector512.Min(v, Vector512.Shuffle(v, Vector512.Create(4UL, 5, 6, 7, 0, 1, 2, 3)));
        v = Vector512.Min(v, Vector512.Shuffle(v, Vector512.Create(2UL, 3, 0, 1, 6, 7, 4, 5)));
        return Vector512.Min(v, Vector512.Shuffle(v, Vector512.Create(1UL, 0, 3, 2, 5, 4, 7, 6)));
    }
}

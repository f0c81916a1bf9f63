using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    // The merger's part of each input's bookkeeping: an input's head and its lane in _heads change together, and an
    // input gaining or losing its head, or running out, updates the live set.

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref MergeInput Input(int input) => ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_inputs), input);

    /// <summary>Parses the record at the input's Start into its head and lane; false when it is not complete yet.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryParseHead(ref MergeInput s, int input)
    {
        if (!s.TryParseHead(_buffers, out ulong prefix))
        {
            return false;
        }
        _heads.Set(input, prefix);
        return true;
    }

    /// <summary>An input without a head that received bytes: it stops waiting if they complete a record.</summary>
    private void FindHead(ref MergeInput s, int input)
    {
        if (!s.HasHead && TryParseHead(ref s, input))
        {
            _live.HeadFound();
        }
    }

    /// <summary>Sets the head of input <paramref name="input"/> to a record the caller parsed, with its lane.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void SetHead(ref MergeInput s, int input, int keyOffset, int keyLength, int valueLength, int length)
    {
        s.SetHead(keyOffset, keyLength, valueLength, length);
        _heads.Set(input, s.HeadPrefix);
    }

    /// <summary>Sets the head of input <paramref name="input"/> and its lane, whose prefix the caller has already loaded.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ParkHead(ref MergeInput s, int input, int keyOffset, int keyLength, int valueLength, int length, ulong prefix)
    {
        s.SetHead(keyOffset, keyLength, valueLength, length);
        _heads.Set(input, prefix);
    }

    /// <summary>Consumes the head of <paramref name="input"/> and parses the next record.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Advance(int input)
    {
        ref var s = ref Input(input);
        if (s.TryAdvance(_buffers, out ulong prefix))
        {
            _heads.Set(input, prefix);
        }
        else
        {
            OnInputDry(ref s, input);
        }
    }

    /// <summary>Input <paramref name="input"/> has no complete record left: it waits for bytes, or is exhausted.</summary>
    private void OnInputDry(ref MergeInput s, int input)
    {
        Debug.Assert(!s.HasHead, "a dry input has no head");
        _heads.Clear(input);
        // A wrapped input here has its next record cut by the wrap and waits for the end of Drain (UnwrapDeferred).
        if (!s.Finished || s.IsWrapped)
        {
            _live.HeadLost();
            return;
        }
        if (s.HasBytesLeft)
        {
            throw s.Truncated();
        }
        _live.Leave(input, waiting: false);
    }

    /// <summary>
    /// The unwraps Drain put off (after <see cref="SaveKeys"/>, so no position is held); true if an input that had
    /// no complete record now has one.
    /// </summary>
    private bool UnwrapDeferred()
    {
        _buffers.UnwrapDeferred = false;
        bool parsed = false;
        for (int i = 0; i < _inputs.Length; i++)
        {
            ref var s = ref _inputs[i];
            if (!s.IsWrapped || s.HasHead)
            {
                continue;
            }
            s.EndDeferredWrap(_buffers);
            if (TryParseHead(ref s, i))
            {
                _live.HeadFound();
                parsed = true;
            }
            else if (s.Finished)
            {
                throw s.Truncated();
            }
        }
        return parsed;
    }

    /// <summary>Copies keys still noted by position in input buffers, before a later Append may move the bytes.</summary>
    private void SaveKeys()
    {
        _lastEmitted.Save(_inputs);
        for (int i = 0; i < _inputs.Length; i++)
        {
            _inputs[i].SaveConsumedKey();
        }
    }

    /// <summary>
    /// The live input with the smallest head; <paramref name="tied"/> tells whether another head has the same
    /// 8-byte prefix (so it may have the same key). Requires every live input to have a head.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int SelectMin(out bool tied)
    {
        if (_heads.HasTournament && _comparer is null)
        {
            _heads.ScanMin(out ulong min, out _);
            // The order compared is total (it ends with the input index), so the smallest among the inputs holding
            // the smallest prefix is the scan's answer whatever order they come in.
            int count = min == ulong.MaxValue ? -1 : _heads.CollectEqual(min, _prefixHolders);
            if (count > 0)
            {
                int smallest = _prefixHolders[0];
                for (int j = 1; j < count; j++)
                {
                    int i = _prefixHolders[j];
                    if (CompareHeads(i, smallest) < 0)
                    {
                        smallest = i;
                    }
                }
                tied = count > 1;
                return smallest;
            }
        }
        var live = _live.Members;
        var heads = _heads;
        int best = live[0];
        ulong bestPrefix = heads[best];
        tied = false;
        for (int j = 1; j < live.Length; j++)
        {
            int i = live[j];
            ulong prefix = heads[i];
            if (prefix < bestPrefix)
            {
                best = i;
                bestPrefix = prefix;
                tied = false;
            }
            else if (prefix == bestPrefix)
            {
                tied = true;
                if (CompareHeads(i, best) < 0)
                {
                    best = i;
                }
            }
        }
        return best;
    }

    /// <summary>Key order of two heads with equal prefixes.</summary>
    private int CompareKeys(int a, int b)
    {
        var keyX = _inputs[a].HeadKey;
        var keyY = _inputs[b].HeadKey;
        return _comparer is null ? KeyPrefix.CompareTail(keyX, keyY) : _comparer.Compare(keyX, keyY);
    }

    /// <summary>Full order of two heads with equal prefixes: key, then (merge order) value, then input index.</summary>
    private int CompareHeads(int a, int b)
    {
        int c = CompareKeys(a, b);
        if (c != 0)
        {
            return c;
        }
        if (_tieBreakByValue)
        {
            c = _inputs[a].HeadValue.SequenceCompareTo(_inputs[b].HeadValue);
            if (c != 0)
            {
                return c;
            }
        }
        return a.CompareTo(b);
    }

    /// <summary>Value order of two heads (see <see cref="MergeInput.CompareHeadValues"/>).</summary>
    private int CompareHeadValues(int a, int b) => MergeInput.CompareHeadValues(ref Input(a), ref Input(b));

    /// <summary>Whether the head of <paramref name="s"/> has the given key.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool HeadHasKey(ref MergeInput s, int input, ReadOnlySpan<byte> key, ulong prefix)
    {
        if (!s.HasHead || _heads[input] != prefix)
        {
            return false;
        }
        var head = s.HeadKey;
        return _comparer is null ? head.SequenceEqual(key) : _comparer.Compare(head, key) == 0;
    }

    /// <summary>
    /// Whether the heads of inputs <paramref name="a"/> and <paramref name="b"/>, whose prefixes are equal, have the
    /// same key. Byte-wise order only.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool HeadKeysEqual(int a, int b)
    {
        ref var y = ref Input(b);
        return Input(a).HeadKeyEquals(y.Data, y.HeadKeyOffset, y.HeadKeyLength);
    }

    /// <summary>Whether any live input's head has the given key.</summary>
    private bool AnyHeadHasKey(ReadOnlySpan<byte> key, ulong prefix)
    {
        int count = PrefixHolders(prefix);
        if (count >= 0)
        {
            foreach (int i in _prefixHolders.AsSpan(0, count))
            {
                if (HeadHasKey(ref _inputs[i], i, key, prefix))
                {
                    return true;
                }
            }
            return false;
        }
        foreach (int i in _live.Members)
        {
            if (HeadHasKey(ref _inputs[i], i, key, prefix))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// With a tournament and byte-wise keys, the inputs whose head has <paramref name="prefix"/> (a real prefix, not
    /// <see cref="ulong.MaxValue"/>), into <see cref="_prefixHolders"/>, and how many; -1 where the caller must visit
    /// every live input instead. Only these heads can have a key with that prefix.
    /// </summary>
    private int PrefixHolders(ulong prefix) =>
        _comparer is null && prefix != ulong.MaxValue ? _heads.CollectEqual(prefix, _prefixHolders) : -1;
}

using System.Numerics;
using System.Runtime.CompilerServices;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>A set of servers of one torus, as a bitmap over server indices (<see cref="Torus.IndexOf"/>).</summary>
public sealed class ServerSet : IEquatable<ServerSet>
{
    private readonly ulong[] _words;

    public ServerSet(int capacity, bool full = false)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(capacity);
        Capacity = capacity;
        _words = new ulong[(capacity + 63) >> 6];
        if (full)
        {
            SetAll();
        }
    }

    /// <summary>Every server of <paramref name="torus"/>.</summary>
    public static ServerSet AllOf(Torus torus) => new(torus.Count, full: true);

    /// <summary>Server indices 0..Capacity-1.</summary>
    public int Capacity { get; }

    public int Count
    {
        get
        {
            int n = 0;
            foreach (ulong w in _words)
            {
                n += BitOperations.PopCount(w);
            }
            return n;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Contains(int index) => (uint)index < (uint)Capacity && (_words[index >> 6] & (1UL << index)) != 0;

    public void Add(int index)
    {
        Check(index);
        _words[index >> 6] |= 1UL << index;
    }

    public void Remove(int index)
    {
        Check(index);
        _words[index >> 6] &= ~(1UL << index);
    }

    public void Clear() => Array.Clear(_words);

    public void SetAll()
    {
        Array.Fill(_words, ulong.MaxValue);
        int tail = Capacity & 63;
        if (tail != 0)
        {
            _words[^1] = (1UL << tail) - 1;
        }
    }

    public void CopyFrom(ServerSet other)
    {
        ArgumentNullException.ThrowIfNull(other);
        if (other.Capacity != Capacity)
        {
            throw new ArgumentException("sets of different tori", nameof(other));
        }
        other._words.CopyTo(_words, 0);
    }

    public ServerSet Clone()
    {
        var copy = new ServerSet(Capacity);
        copy.CopyFrom(this);
        return copy;
    }

    /// <summary>Members in increasing index order.</summary>
    public IEnumerable<int> Members()
    {
        for (int i = 0; i < Capacity; i++)
        {
            if (Contains(i))
            {
                yield return i;
            }
        }
    }

    public bool Equals(ServerSet? other) =>
        other is not null && other.Capacity == Capacity && _words.AsSpan().SequenceEqual(other._words);

    public override bool Equals(object? obj) => Equals(obj as ServerSet);

    public override int GetHashCode()
    {
        var h = new HashCode();
        h.Add(Capacity);
        foreach (ulong w in _words)
        {
            h.Add(w);
        }
        return h.ToHashCode();
    }

    private void Check(int index)
    {
        if ((uint)index >= (uint)Capacity)
        {
            throw new ArgumentOutOfRangeException(nameof(index), index, $"server index must be below {Capacity}");
        }
    }
}

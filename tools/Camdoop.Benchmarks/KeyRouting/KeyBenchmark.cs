using BenchmarkDotNet.Attributes;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.Benchmarks.KeyRouting;

/// <summary>Per-key costs: compare, equality, hash, SHA-1 from a string, and owner lookup on a healthy and a damaged 8x8x8 cube.</summary>
[MemoryDiagnoser]
public class KeyBenchmark
{
    private const int Count = 1024;

    private readonly Key[] _keys = new Key[Count];
    private readonly Key[] _copies = new Key[Count];
    private readonly string[] _names = new string[Count];
    private KeyMapper _mapper = null!;
    private ServerSet _healthy = null!;
    private ServerSet _damaged = null!;
    private Key[] _keysOfFailed = null!;

    [GlobalSetup]
    public void Setup()
    {
        var rng = new Random(1);
        var bytes = new byte[Key.Size];
        for (int i = 0; i < Count; i++)
        {
            rng.NextBytes(bytes);
            _keys[i] = Key.Read(bytes);
            // Half the pairs share their top 64 bits so the comparison reaches the second word.
            _copies[i] = i % 2 == 0 ? _keys[i] : new Key(_keys[i].High, _keys[i].Middle ^ 1, _keys[i].Low);
            _names[i] = "input/chunk-" + i.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }
        var torus = new Torus(8, 8, 8);
        _mapper = KeyMapper.Shared(torus);
        _healthy = ServerSet.AllOf(torus);
        _damaged = ServerSet.AllOf(torus);
        for (int i = 0; i < torus.Count; i += 10)
        {
            _damaged.Remove(i); // 10% of the servers failed
        }
        var failed = new Coordinate(0, 0, 0);
        foreach (var p in Ports.All)
        {
            _damaged.Remove(torus.IndexOf(torus.Neighbour(failed, p))); // and a whole first shell: keys cascade to the second
        }
        _keysOfFailed = _keys.Select(k => Key.FromCoordinate(torus, failed, k)).ToArray();
    }

    [Benchmark(OperationsPerInvoke = Count)]
    public int Compare()
    {
        int sum = 0;
        for (int i = 0; i < Count; i++)
        {
            sum += _keys[i].CompareTo(_copies[i]);
        }
        return sum;
    }

    [Benchmark(OperationsPerInvoke = Count)]
    public int Equality()
    {
        int n = 0;
        for (int i = 0; i < Count; i++)
        {
            if (_keys[i] == _copies[i])
            {
                n++;
            }
        }
        return n;
    }

    [Benchmark(OperationsPerInvoke = Count)]
    public int Hash()
    {
        int h = 0;
        for (int i = 0; i < Count; i++)
        {
            h ^= _keys[i].GetHashCode();
        }
        return h;
    }

    [Benchmark(OperationsPerInvoke = Count)]
    public ulong Sha1FromString()
    {
        ulong x = 0;
        for (int i = 0; i < Count; i++)
        {
            x ^= Key.FromString(_names[i]).High;
        }
        return x;
    }

    [Benchmark(OperationsPerInvoke = Count)]
    public int OwnerHealthy()
    {
        int s = 0;
        for (int i = 0; i < Count; i++)
        {
            s += _mapper.OwnerIndex(_keys[i], _healthy);
        }
        return s;
    }

    /// <summary>Random keys with 10% of the servers failed: most lookups hit a live primary, the rest remap one shell out.</summary>
    [Benchmark(OperationsPerInvoke = Count)]
    public int OwnerWithFailures()
    {
        int s = 0;
        for (int i = 0; i < Count; i++)
        {
            s += _mapper.OwnerIndex(_keys[i], _damaged);
        }
        return s;
    }

    /// <summary>Worst case: every key's primary and its six neighbours failed, so each lookup scans two shells.</summary>
    [Benchmark(OperationsPerInvoke = Count)]
    public int OwnerCascade()
    {
        int s = 0;
        for (int i = 0; i < Count; i++)
        {
            s += _mapper.OwnerIndex(_keysOfFailed[i], _damaged);
        }
        return s;
    }
}

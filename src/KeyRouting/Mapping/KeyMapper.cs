using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>
/// Maps keys to servers (the Camdoop paper, §3). The primary owner comes from the top 64 bits, spread uniformly over any
/// X x Y x Z torus: index = (top64 x N) >> 64. When the primary is not in the caller's view of reachable servers,
/// the key goes to the reachable server at the smallest torus distance from the primary; among the servers of that
/// shell, rendezvous hashing of the key's remaining bits with each candidate's index picks one. The result
/// depends only on the key and the view, so every server with the same view computes the same owner, and a failed
/// server's keys spread evenly over its live neighbours (or over the next shell out when they failed too).
/// Lookups allocate nothing; the shells of offsets are built once per distance and shared.
/// </summary>
public sealed class KeyMapper
{
    private static readonly ConcurrentDictionary<(int, int, int), KeyMapper> SharedMappers = new();

    private readonly Offset[]?[] _shells;
    private readonly Lock _shellLock = new();
    private readonly int _sizeX;
    private readonly int _sizeY;
    private readonly int _sizeZ;

    public KeyMapper(Torus torus)
    {
        ArgumentNullException.ThrowIfNull(torus);
        Torus = torus;
        _sizeX = torus.SizeX;
        _sizeY = torus.SizeY;
        _sizeZ = torus.SizeZ;
        _shells = new Offset[]?[torus.Diameter + 1];
    }

    /// <summary>One mapper per torus shape, shared by every server (it holds no per-server state).</summary>
    public static KeyMapper Shared(Torus torus)
    {
        ArgumentNullException.ThrowIfNull(torus);
        return SharedMappers.GetOrAdd((torus.SizeX, torus.SizeY, torus.SizeZ), static (_, t) => new KeyMapper(t), torus);
    }

    public Torus Torus { get; }

    /// <summary>The server index the key belongs to when every server is reachable.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int PrimaryIndex(in Key key) => (int)Math.BigMul(key.High, (ulong)Torus.Count, out _);

    public Coordinate Primary(in Key key) => Torus.CoordinateOf(PrimaryIndex(key));

    /// <summary>
    /// The index of the key's owner given the servers in <paramref name="reachable"/>; -1 only when the set is empty.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int OwnerIndex(in Key key, ServerSet reachable)
    {
        int primary = PrimaryIndex(key);
        return reachable.Contains(primary) ? primary : Remap(primary, key, reachable);
    }

    public Coordinate Owner(in Key key, ServerSet reachable)
    {
        int index = OwnerIndex(key, reachable);
        if (index < 0)
        {
            throw new InvalidOperationException("no server is reachable, so no server owns any key");
        }
        return Torus.CoordinateOf(index);
    }

    /// <summary>The smallest top-64-bit value whose primary owner is <paramref name="coordinate"/>; inverts <see cref="PrimaryIndex"/>.</summary>
    public static ulong FirstHighOf(Torus torus, Coordinate coordinate)
    {
        ArgumentNullException.ThrowIfNull(torus);
        if (!torus.Contains(coordinate))
        {
            throw new ArgumentOutOfRangeException(nameof(coordinate), coordinate, $"not a server of the {torus} torus");
        }
        // ceil(index * 2^64 / N): then floor(high * N / 2^64) == index because high * N < index * 2^64 + N.
        UInt128 scaled = ((UInt128)(ulong)torus.IndexOf(coordinate) << 64) + (ulong)(torus.Count - 1);
        return (ulong)(scaled / (ulong)torus.Count);
    }

    /// <summary>The servers at exactly <paramref name="distance"/> hops from any server, as offsets (each server once).</summary>
    internal ReadOnlySpan<Offset> Shell(int distance)
    {
        var shell = Volatile.Read(ref _shells[distance]);
        if (shell is not null)
        {
            return shell;
        }
        lock (_shellLock)
        {
            shell = _shells[distance] ??= BuildShell(distance);
        }
        return shell;
    }

    private int Remap(int primary, in Key key, ServerSet reachable)
    {
        ulong seed = Mix(key.Middle ^ Mix(key.Low ^ 0x5851_F42D_4C95_7F2DUL));
        int pz = primary % _sizeZ;
        int rest = primary / _sizeZ;
        int py = rest % _sizeY;
        int px = rest / _sizeY;
        for (int d = 1; d < _shells.Length; d++)
        {
            int best = -1;
            ulong bestWeight = 0;
            foreach (var o in Shell(d))
            {
                int x = Wrap(px + o.X, _sizeX);
                int y = Wrap(py + o.Y, _sizeY);
                int z = Wrap(pz + o.Z, _sizeZ);
                int candidate = (((x * _sizeY) + y) * _sizeZ) + z;
                if (!reachable.Contains(candidate))
                {
                    continue;
                }
                ulong weight = Mix(seed ^ ((ulong)(candidate + 1) * 0x9E37_79B9_7F4A_7C15UL));
                if (best < 0 || weight > bestWeight || (weight == bestWeight && candidate < best))
                {
                    best = candidate;
                    bestWeight = weight;
                }
            }
            if (best >= 0)
            {
                return best;
            }
        }
        return -1;
    }

    private Offset[] BuildShell(int distance)
    {
        var list = new List<Offset>();
        // Offsets along an axis of size s cover each server once: (-s/2, s/2], |offset| being the hop count.
        int minX = -((_sizeX - 1) / 2), maxX = _sizeX / 2;
        int minY = -((_sizeY - 1) / 2), maxY = _sizeY / 2;
        int minZ = -((_sizeZ - 1) / 2), maxZ = _sizeZ / 2;
        for (int dx = Math.Max(minX, -distance); dx <= Math.Min(maxX, distance); dx++)
        {
            int restX = distance - Math.Abs(dx);
            for (int dy = Math.Max(minY, -restX); dy <= Math.Min(maxY, restX); dy++)
            {
                int dz = restX - Math.Abs(dy);
                if (dz <= maxZ)
                {
                    list.Add(new Offset(dx, dy, dz));
                }
                if (dz != 0 && -dz >= minZ)
                {
                    list.Add(new Offset(dx, dy, -dz));
                }
            }
        }
        return [.. list];
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int Wrap(int v, int size) => v < 0 ? v + size : v >= size ? v - size : v;

    /// <summary>The splitmix64 finaliser: a cheap, well-mixed 64-bit hash step.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static ulong Mix(ulong z)
    {
        z = (z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D0_49BB_1331_11EBUL;
        return z ^ (z >> 31);
    }

    internal readonly record struct Offset(int X, int Y, int Z);
}

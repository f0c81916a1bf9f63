using System.Buffers.Binary;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// Where a job's pieces live (the Camdoop paper, §4.1), the same on every server: reduce task r's root server (spread over the
/// cube, starting from a server picked by a hash of the job id), the job's N vertex ids (top bits a server coordinate, the rest a hash of the
/// job id), map task ids, and <see cref="GetParent"/> over keys, which wraps the six disjoint trees.
/// </summary>
public sealed class JobPlacement
{
    /// <summary>The tree index that names a root reducer in <see cref="VertexKey"/> (trees are 0 to 5).</summary>
    public const int RootTree = TreeTopology.TreeCount;

    private readonly int[] _rootIndex;
    private readonly KeyMapper _mapper;

    /// <summary>
    /// The placement of job <paramref name="jobId"/>: its reduce tasks rooted on <paramref name="roots"/> (server
    /// indices in task order, distinct) when given, else spread over the cube from a server the job id picks.
    /// </summary>
    public JobPlacement(Torus torus, ulong jobId, int reduceTasks, TreeFamily trees = TreeFamily.Shallow, IReadOnlyList<int>? roots = null,
        bool sharedRoots = false)
    {
        ArgumentNullException.ThrowIfNull(torus);
        ArgumentOutOfRangeException.ThrowIfLessThan(reduceTasks, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(reduceTasks, torus.Count);
        Torus = torus;
        Trees = new TreeTopology(torus, trees);
        JobId = jobId;
        ReduceTasks = reduceTasks;
        _mapper = KeyMapper.Shared(torus);
        Span<byte> idBytes = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(idBytes, jobId);
        JobKey = Key.FromBytes(idBytes);
        int n = torus.Count;
        int rotation = (int)(JobKey.Middle % (ulong)n);
        if (roots is null)
        {
            _rootIndex = SpreadRoots(torus, reduceTasks, rotation);
            return;
        }
        if (roots.Count != reduceTasks || roots.Any(r => (uint)r >= (uint)n) || (!sharedRoots && roots.Distinct().Count() != reduceTasks))
        {
            throw new ArgumentException($"{roots.Count} roots for R = {reduceTasks}: each must be a distinct server of the {n}", nameof(roots));
        }
        _rootIndex = [.. roots];
    }

    /// <summary>The placement a job description asks for (its roots, when it places them).</summary>
    public static JobPlacement For(Torus torus, JobDescription description)
    {
        ArgumentNullException.ThrowIfNull(description);
        return new JobPlacement(torus, description.JobId, description.ReduceTasks, description.Trees, description.Roots, description.Mode == ShuffleMode.Tcp);
    }

    /// <summary>
    /// <paramref name="count"/> of <paramref name="candidates"/> far apart in the torus, in farthest-point order from the
    /// first candidate (ties: the earliest candidate). Over every server in index order from the server a job id picks,
    /// the first R are that job's default roots for R &lt; N; placements of several jobs, or of a job confined to some
    /// servers, take theirs from such an order.
    /// </summary>
    public static int[] Spread(Torus torus, IReadOnlyList<int> candidates, int count)
    {
        ArgumentNullException.ThrowIfNull(torus);
        ArgumentNullException.ThrowIfNull(candidates);
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(count, candidates.Count);
        var order = new int[count];
        var nearest = new int[candidates.Count];
        Array.Fill(nearest, int.MaxValue);
        int next = 0;
        for (int r = 0; r < count; r++)
        {
            order[r] = candidates[next];
            var chosen = torus.CoordinateOf(candidates[next]);
            int best = -1;
            for (int k = 0; k < candidates.Count; k++)
            {
                int d = Math.Min(nearest[k], torus.Distance(chosen, torus.CoordinateOf(candidates[k])));
                nearest[k] = d;
                if (d > best)
                {
                    best = d;
                    next = k;
                }
            }
        }
        return order;
    }

    /// <summary>The server a job id's default placement spreads its roots from (its R = 1 root).</summary>
    public static int SpreadStart(Torus torus, ulong jobId) => new JobPlacement(torus, jobId, 1).RootIndex(0);

    /// <summary>
    /// Roots far apart in the torus, not just in index order: evenly spaced indices put R = 64 roots of 8x8x8 in
    /// one plane and R = 8 on one line, where their trees pile onto the same links. Farthest-point order: each root
    /// is the server farthest from the roots chosen so far (ties: the first in index order from
    /// <paramref name="start"/>), so R = 8 and R = 64 on 8x8x8 form lattices 4 and 2 hops apart.
    /// </summary>
    private static int[] SpreadRoots(Torus torus, int reduceTasks, int start)
    {
        int n = torus.Count;
        var roots = new int[reduceTasks];
        if (reduceTasks == n)
        {
            for (int r = 0; r < n; r++)
            {
                roots[r] = (start + r) % n;
            }
            return roots;
        }
        var nearest = new int[n];
        Array.Fill(nearest, int.MaxValue);
        int next = start;
        for (int r = 0; r < reduceTasks; r++)
        {
            roots[r] = next;
            var chosen = torus.CoordinateOf(next);
            int best = -1, bestIndex = next;
            for (int k = 0; k < n; k++)
            {
                int i = (start + k) % n;
                int d = Math.Min(nearest[i], torus.Distance(chosen, torus.CoordinateOf(i)));
                nearest[i] = d;
                if (d > best)
                {
                    best = d;
                    bestIndex = i;
                }
            }
            next = bestIndex;
        }
        return roots;
    }

    public Torus Torus { get; }

    public TreeTopology Trees { get; }

    public ulong JobId { get; }

    public int ReduceTasks { get; }

    /// <summary>SHA-1 of the job id: its bits below the coordinate make the job's vertex ids.</summary>
    public Key JobKey { get; }

    /// <summary>Server index of reduce task <paramref name="reduceTask"/>'s root.</summary>
    public int RootIndex(int reduceTask) => _rootIndex[reduceTask];

    public Coordinate Root(int reduceTask) => Torus.CoordinateOf(_rootIndex[reduceTask]);

    /// <summary>Every reduce task's root server index, in task order.</summary>
    public IReadOnlyList<int> RootIndices => _rootIndex;

    /// <summary>
    /// The job's vertex id on <paramref name="server"/>: one per server, shared by all reduce tasks and trees. Frames
    /// to a server's vertices are routed by it, so segments of several streams to one server share a frame.
    /// </summary>
    public Key VertexId(Coordinate server) => Key.FromCoordinate(Torus, server, JobKey);

    /// <summary>
    /// The key one vertex (reduce task, tree, the server it sits on in the tree) is owned by: while that server is up it
    /// owns it; after it fails, the server the key maps to in the job's view runs the vertex (the Camdoop paper, §4.2).
    /// Keys differ per reduce task and tree, so a failed server's vertices spread over its neighbours. Among the
    /// possible keys the first is taken whose remap prefers the vertex's parent while the parent's server is up: the
    /// vertex's children then send straight to the parent's server, which merges for both, rather than through a third
    /// server whose links carry another tree already (into a root, that doubles the load of one of its six links).
    /// <paramref name="tree"/> is <see cref="RootTree"/> for the root reducer, which has no parent. The trees are those
    /// rooted at <paramref name="root"/> (by default the reduce task's first root: see <see cref="NextRoot"/>).
    /// </summary>
    public Key VertexKey(Coordinate home, int reduceTask, int tree, Coordinate? root = null)
    {
        var r = root ?? Root(reduceTask);
        lock (_vertexKeys)
        {
            if (_vertexKeys.TryGetValue((home, reduceTask, tree, r), out var cached))
            {
                return cached;
            }
        }
        var key = FindVertexKey(home, reduceTask, tree, r);
        lock (_vertexKeys)
        {
            _vertexKeys[(home, reduceTask, tree, r)] = key;
        }
        return key;
    }

    private readonly Dictionary<(Coordinate Home, int ReduceTask, int Tree, Coordinate Root), Key> _vertexKeys = [];

    private Key FindVertexKey(Coordinate home, int reduceTask, int tree, Coordinate root)
    {
        ulong mixed = Mix(JobKey.Middle ^ Mix(((ulong)(uint)reduceTask << 8) | (uint)tree) ^ ((ulong)(uint)Torus.IndexOf(root) << 40));
        Key Candidate(ulong attempt) => Key.FromCoordinate(Torus, home, new Key(Mix(mixed ^ attempt), Mix(mixed ^ JobKey.High ^ attempt), 0));
        var parent = tree == RootTree ? null : Trees.GetParent(root, home, tree);
        if (parent is null)
        {
            return Candidate(0);
        }
        var othersUp = ServerSet.AllOf(Torus);
        othersUp.Remove(Torus.IndexOf(home));
        int parentIndex = Torus.IndexOf(parent.Value);
        for (ulong attempt = 0; attempt < 4096; attempt++)
        {
            var key = Candidate(attempt);
            if (_mapper.OwnerIndex(key, othersUp) == parentIndex)
            {
                return key;
            }
        }
        return Candidate(0); // unreachable in practice: one neighbour in six wins each attempt
    }

    /// <summary>
    /// Where reduce task <paramref name="reduceTask"/> starts over when its root <paramref name="failed"/> fails, as
    /// generation <paramref name="generation"/>: a server two hops away from it, in <paramref name="view"/> with all six
    /// neighbours, picked by a hash every server computes alike (the Camdoop paper, §4.2, restarts a failed root; this
    /// places it where its trees can be new and its six links all up, so starting over takes the original time, not
    /// twice that through a root with a dead link). Falls back to any live server two hops away, then the nearest live
    /// server at all.
    /// </summary>
    public Coordinate NextRoot(int reduceTask, int generation, Coordinate failed, ServerSet view)
    {
        ArgumentNullException.ThrowIfNull(view);
        ulong seed = Mix(JobKey.Middle ^ Mix(((ulong)(uint)reduceTask << 8) ^ (ulong)(uint)generation));
        Coordinate? Pick(Func<Coordinate, bool> eligible, int distance)
        {
            Coordinate? best = null;
            ulong bestWeight = 0;
            foreach (var c in Torus.All())
            {
                int i = Torus.IndexOf(c);
                if (!view.Contains(i) || (distance > 0 && Torus.Distance(c, failed) != distance) || !eligible(c))
                {
                    continue;
                }
                ulong weight = Mix(seed ^ ((ulong)(i + 1) * 0x9E37_79B9_7F4A_7C15UL));
                if (best is null || weight > bestWeight)
                {
                    best = c;
                    bestWeight = weight;
                }
            }
            return best;
        }
        bool AllNeighboursUp(Coordinate c)
        {
            foreach (var port in Ports.All)
            {
                if (!view.Contains(Torus.IndexOf(Torus.Neighbour(c, port))))
                {
                    return false;
                }
            }
            return true;
        }
        return Pick(AllNeighboursUp, 2) ?? Pick(_ => true, 2) ?? Pick(_ => true, 0)
            ?? throw new InvalidOperationException("no server is left to run the reduce task");
    }

    /// <summary>The splitmix64 finaliser.</summary>
    private static ulong Mix(ulong z)
    {
        z = (z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D0_49BB_1331_11EBUL;
        return z ^ (z >> 31);
    }

    /// <summary>rootId of reduce task <paramref name="reduceTask"/>.</summary>
    public Key RootId(int reduceTask) => VertexId(Root(reduceTask));

    /// <summary>A map task id whose top bits name <paramref name="server"/> and whose rest hashes the chunk name.</summary>
    public static Key MapTaskId(Torus torus, Coordinate server, string chunkName)
    {
        ArgumentNullException.ThrowIfNull(chunkName);
        return Key.FromCoordinate(torus, server, Key.FromString(chunkName));
    }

    /// <summary>The server whose coordinate a vertex or map task id carries in its top bits.</summary>
    public Coordinate CoordinateOf(in Key id) => _mapper.Primary(id);

    /// <summary>
    /// getParent (the Camdoop paper, §4.1): for a map task id, the vertex id on the same server; for a vertex id, the vertex id of
    /// its one-hop parent in <paramref name="tree"/>; null for the root. Map task and vertex ids are told apart by
    /// their low bits (vertex ids carry the job key).
    /// </summary>
    public Key? GetParent(in Key rootId, in Key id, int tree)
    {
        var self = CoordinateOf(id);
        if (!IsVertexId(id))
        {
            return VertexId(self);
        }
        var parent = Trees.GetParent(CoordinateOf(rootId), self, tree);
        return parent is null ? null : VertexId(parent.Value);
    }

    /// <summary>Whether <paramref name="id"/> is one of this job's vertex ids.</summary>
    public bool IsVertexId(in Key id) => VertexId(CoordinateOf(id)) == id;
}

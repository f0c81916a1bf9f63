using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Tests.Support;

/// <summary>
/// The data plane end to end without a network: map every server's input, then for every reduce task and stripe
/// push the runs up a random tree of merging vertices (fan-in at most 6 children plus the local run, each vertex a
/// <see cref="StreamMerger"/> fed in random chunks), and at the root reduce the six stripe streams together with
/// the root's own six local runs. Vertices combine when the job is associative (unless noAgg), else only merge.
/// </summary>
public static class ShufflePipeline
{
    public static List<Rec>[] Run(IMapReduceJob job, IReadOnlyList<byte[]> inputs, int reduceTasks, Random random, bool noAgg = false, string? runDirectory = null)
    {
        int servers = inputs.Count;
        var maps = new MapOutput[servers];
        for (int s = 0; s < servers; s++)
        {
            maps[s] = MapTask.Run(job, inputs[s], new MapTaskOptions
            {
                ReduceTasks = reduceTasks,
                JobId = 7,
                MapTaskId = (ulong)s,
                OutputDirectory = runDirectory is null ? null : Path.Combine(runDirectory, $"map{s}"),
            });
        }
        var vertexMode = job.IsAssociativeCommutative && !noAgg ? MergeMode.Combine : MergeMode.Merge;
        var results = new List<Rec>[reduceTasks];
        for (int r = 0; r < reduceTasks; r++)
        {
            int root = r % servers;
            var rootInputs = new List<byte[]>();
            for (int stripe = 0; stripe < Stripes.Count; stripe++)
            {
                // A random tree over the other servers, rooted at the root's vertex for this stripe.
                var order = Enumerable.Range(0, servers).Where(s => s != root).OrderBy(_ => random.Next()).ToList();
                var children = new Dictionary<int, List<int>> { [root] = [] };
                var placed = new List<int> { root };
                foreach (int s in order)
                {
                    var open = placed.Where(p => children[p].Count < 6).ToList();
                    int parent = open[random.Next(open.Count)];
                    children[parent].Add(s);
                    children[s] = [];
                    placed.Add(s);
                }
                // The stripe's stream into the root merges the root vertex's children (its local run joins at the reducer).
                rootInputs.Add(Vertex(job, vertexMode, root, stripe, r, children, maps, random, includeLocal: false));
            }
            for (int stripe = 0; stripe < Stripes.Count; stripe++)
            {
                rootInputs.Add(ReadRun(maps[root], r, stripe));
            }
            var reducer = new StreamMerger(job, rootInputs.Count, MergeMode.Reduce, initialInputCapacity: 256);
            results[r] = Rec.Decode(MergeDriver.Run(reducer, rootInputs, random, maxChunk: 4000, maxOutput: 3000));
        }
        return results;
    }

    private static byte[] Vertex(IMapReduceJob job, MergeMode mode, int server, int stripe, int reduceTask,
        Dictionary<int, List<int>> children, MapOutput[] maps, Random random, bool includeLocal = true)
    {
        var streams = children[server].Select(c => Vertex(job, mode, c, stripe, reduceTask, children, maps, random)).ToList();
        if (includeLocal)
        {
            streams.Add(ReadRun(maps[server], reduceTask, stripe));
        }
        if (streams.Count == 0)
        {
            return [];
        }
        var merger = new StreamMerger(job, streams.Count, mode, initialInputCapacity: 128);
        return MergeDriver.Run(merger, streams, random, maxChunk: random.Next(2) == 0 ? 700 : 9000, maxOutput: 9000);
    }

    /// <summary>Reads a run block by block as a leaf would.</summary>
    public static byte[] ReadRun(MapOutput map, int reduceTask, int stripe)
    {
        using var reader = map.OpenRun(reduceTask, stripe);
        var data = new MemoryStream();
        var block = new byte[1000];
        int n;
        while ((n = reader.Read(block)) > 0)
        {
            data.Write(block, 0, n);
        }
        return data.ToArray();
    }
}

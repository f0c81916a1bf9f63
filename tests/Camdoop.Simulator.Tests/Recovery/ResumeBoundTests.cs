using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Xunit.Abstractions;

namespace Camdoop.Simulator.Tests.Recovery;

/// <summary>
/// Resuming from the last key really resumes (the Camdoop paper, §4.2): when a server that is not a root fails, the
/// bytes sent again are at most what its vertices had taken in and not yet forwarded (what the children had sent them,
/// less what their parents hold) plus its map output, never the whole of what flowed into its vertices again. (At
/// R = N every server is a root: its reduce task starts over, and that is not a resume.)
/// </summary>
public sealed class ResumeBoundTests(ITestOutputHelper output)
{
    public static TheoryData<string, string, int> Cases() => new()
    {
        { "3x3x3", "random@0.25T", 1 },
        { "3x3x3", "random@0.5T", 1 },
        { "3x3x3", "random@0.75T", 1 },
        { "3x3x3", "root-neighbour@0.5T", 1 },
        { "4x4x4", "random@0.5T", 1 },
        { "4x4x4", "root-neighbour@0.75T", 1 },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void BytesSentAgainStayWithinTheFailedServersUnforwardedDataAndMapOutput(string torus, string what, int reducers)
    {
        var cube = Torus.Parse(torus);
        // S = 1: records pass every vertex unchanged, so a vertex's bytes in and out count the same records.
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = cube,
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            Mode = ShuffleMode.Camdoop,
            ReduceTasks = reducers,
            Settings = new SimulationSettings { BytesPerServer = 400_000 },
        });
        var failure = run.Resolve(what);
        var map = run.Input.MapOutputs[cube.IndexOf(failure.Server)];
        long unforwarded = 0, takenIn = 0;
        int childStreams = 0;
        var result = run.Run([failure], run.Options with
        {
            AtShuffleStart = (sim, t0) => sim.Schedule(t0 + failure.AtNanoseconds - 1, () =>
            {
                var jobs = Enumerable.Range(0, cube.Count).Select(i => sim.Host(i).GetService<CamdoopService>()!.GetJob(run.Options.JobId)!).ToArray();
                var failed = jobs[cube.IndexOf(failure.Server)];
                foreach (var vertex in failed.Vertices.Where(v => v.Home == failure.Server))
                {
                    // What the children had sent the vertex, in flight included (all of it after the resume key comes
                    // again), and what its parent holds of it (the resume key is the last of those records), less the
                    // part of that which came from the vertex's own map output rather than its children.
                    long sent = 0;
                    foreach (var child in vertex.Children.Where(c => c.Source == 0))
                    {
                        var sender = jobs[cube.IndexOf(child.Child)].Vertices.Single(v => v.Home == child.Child && v.ReduceTask == vertex.ReduceTask && v.TreeIndex == vertex.TreeIndex);
                        sent += sender.Output.SentHigh;
                        takenIn += child.Received;
                        childStreams++;
                    }
                    var parentHolds = jobs.SelectMany(j => j.Vertices.Cast<VertexBase>().Concat(j.RootReducers))
                        .SelectMany(p => p.Children)
                        .Single(c => c.Child == failure.Server && c.Source == 0 && c.ReduceTask == vertex.ReduceTask && c.Tree == vertex.TreeIndex);
                    long fromChildren = parentHolds.Received - map.Payload(vertex.ReduceTask, vertex.TreeIndex).Length;
                    unforwarded += Math.Max(0, sent - Math.Max(0, fromChildren));
                }
            }),
        });

        long mapBytes = 0;
        for (int r = 0; r < reducers; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                mapBytes += map.Payload(r, s).Length;
            }
        }
        // A record the failure cut in two at a parent comes again whole: at most one record per child stream.
        long slack = childStreams * 256L;
        long resent = result.Recovery!.ResentBytes;
        output.WriteLine($"{what} on {torus}, R={reducers}: resent {resent}, unforwarded {unforwarded}, map output {mapBytes}, taken in {takenIn}");
        Assert.True(childStreams > 0);
        Assert.True(resent <= unforwarded + mapBytes + slack,
            $"sent again {resent} B, more than the failed server's unforwarded {unforwarded} B plus its map output {mapBytes} B");
        Assert.True(unforwarded < takenIn, "the bound must be below resending everything the vertices took in");
    }
}

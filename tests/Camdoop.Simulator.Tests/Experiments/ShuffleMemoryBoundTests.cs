using Camdoop.Experiments;
using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// On 512 servers a server's shuffle buffers stay within what its streams may have in flight, whatever the data:
/// each stream, in or out, at most a window and a half and two segments (an input's reservation; a send buffer's
/// window with a segment either side), rounded up to the buffer pool's size class; a root's input of its own map
/// output counts as one stream. Nothing grows with the input.
/// </summary>
public sealed class ShuffleMemoryBoundTests
{
    [Fact]
    public void EveryServersBuffersStayWithinItsStreamsWindows()
    {
        var peaks = new long[512];
        var streams = new int[512];
        // Small windows, so that a little data per server fills them: the bound is in windows, whatever their size.
        var shuffle = new ShuffleOptions { MaxWindowBytes = 32 * 1024 };
        int window = shuffle.MaxWindowBytes;
        var options = new JobSimulationOptions
        {
            Torus = new Torus(8, 8, 8),
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            Settings = new SimulationSettings { BytesPerServer = 96 * 1024, Verify = true, Service = new CamdoopServiceOptions { Shuffle = shuffle } },
            ReduceTasks = 1,
            Mode = ShuffleMode.NoAgg,
            MapParallelism = 1,
            SimulationThreads = 1,
            Inspect = (_, services, jobs) =>
            {
                for (int s = 0; s < services.Count; s++)
                {
                    peaks[s] = services[s].Transport.Buffers.PeakRentedBytes;
                    // In: the children's streams, and a root's input of its own server's map output; out: a vertex's stream.
                    streams[s] = jobs[s] is { } job ? job.InboundStreams + job.RootReducers.Count() + job.Vertices.Count() : 0;
                }
            },
        };
        var result = JobSimulation.Run(options);
        Assert.True(result.Verified, result.VerificationError);

        long perStream = ShuffleBufferPool.SizeFor(window + (window / 2) + (2 * ShuffleWire.MaxSegmentBytes) + MapReduce.Merge.StreamMerger.LendSlackBytes);
        long bytesPerServer = result.IntermediateEncodedBytes / 512;
        for (int s = 0; s < 512; s++)
        {
            Assert.True(streams[s] > 0, $"server {s} had no streams");
            Assert.True(peaks[s] <= streams[s] * perStream,
                $"server {s}: {peaks[s]} bytes of buffers for {streams[s]} streams (bound {streams[s] * perStream})");
        }
        // The root takes every byte of the job, and holds a small part of it at once.
        Assert.True(peaks.Max() < result.IntermediateEncodedBytes / 10, $"peak {peaks.Max()} for {result.IntermediateEncodedBytes} bytes");
        Assert.True(bytesPerServer > 2 * window, "enough data per server to fill the windows");
    }
}

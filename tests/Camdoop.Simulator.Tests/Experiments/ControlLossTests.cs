using Camdoop.Experiments;
using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// Job control's messages cross the same lossy links as the shuffle. A lost control frame must cost about a round
/// trip's worth of retry wait, not the channel's longest wait (300 ms, sized for a loaded cube): the word to start the
/// shuffle is on the job's critical path.
/// </summary>
public class ControlLossTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static JobSimulationOptions Options() => new()
    {
        Torus = Cube,
        Workload = Workload.Synthetic,
        OutputRatio = 0.5,
        ReduceTasks = 3,
        Mode = ShuffleMode.Camdoop,
        BytesPerServer = 20_000,
        Verify = true,
        MapParallelism = 1,
    };

    [Fact]
    public void LosingTheFirstSendOfEveryShuffleStartCostsMillisecondsNotTheLongestWait()
    {
        const JobMessage kind = JobMessage.Shuffle;
        var lossless = JobSimulation.Run(Options());
        Assert.True(lossless.Verified, lossless.VerificationError);

        var seen = new HashSet<(Coordinate, Coordinate, uint, int)>();
        int dropped = 0;
        var result = JobSimulation.Run(Options() with
        {
            Configure = sim => sim.DropFilter = (link, frame) =>
            {
                if (FrameCodec.TryRead(frame.Span, sim.Torus, out var header) != FrameError.None
                    || header.ServiceId != WellKnownServices.JobControl
                    || !ControlWire.TryReadHeader(FrameCodec.Payload(frame.Span, header), out var control)
                    || control.Kind != kind
                    || !seen.Add((header.Source, header.Destination, control.Extra, control.Fragment)))
                {
                    return false;
                }
                dropped++;
                return true;
            },
        });

        Assert.True(dropped > 0, $"no {kind} frame crossed a link");
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        // Every first send was lost: the job waits one retry more than without loss, a few minimum retry waits at most.
        double extra = result.ShuffleReduceSeconds - lossless.ShuffleReduceSeconds;
        Assert.True(extra < 0.1, $"{dropped} lost {kind} frames cost {extra * 1000:0.0} ms");
    }
}

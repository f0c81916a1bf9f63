using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.DirectShuffle;

/// <summary>
/// A failed child's input at its parent, continued from its own children's resent streams: only the records after
/// the cut reach the parent's merger, combined as the failed child would have, and the input ends with them.
/// </summary>
public sealed class ReplacedInputTests
{
    [Fact]
    public void OnlyTheRecordsPastTheCutReachTheParentCombined()
    {
        var job = new SumJob();
        var parent = new StreamMerger(job, 1, MergeMode.Combine);
        var replaced = new ReplacedInput(job, tree: 0, input: 0, cut: "b"u8.ToArray(), dropsAll: false, senders: [3, 5]);
        int fromThree = replaced.Attach(3);
        int fromFive = replaced.Attach(5);
        Assert.Equal(-1, replaced.Attach(3)); // a second stream from the same child
        Assert.Equal(-1, replaced.Attach(7)); // not a child of the failed node

        var three = Rec.Encode([Rec.Of("a", 1), Rec.Of("b", 2), Rec.Of("c", 3), Rec.Of("e", 10)]);
        var five = Rec.Encode([Rec.Of("b", 4), Rec.Of("c", 30), Rec.Of("d", 5)]);
        // Chunks that cut records in two.
        for (int at = 0; at < Math.Max(three.Length, five.Length); at += 3)
        {
            if (at < three.Length)
            {
                replaced.OnData(fromThree, three.AsSpan(at, Math.Min(3, three.Length - at)));
            }
            if (at < five.Length)
            {
                replaced.OnData(fromFive, five.AsSpan(at, Math.Min(3, five.Length - at)));
            }
            replaced.Feed(parent);
        }
        replaced.OnEnd(fromThree);
        replaced.Feed(parent);
        Assert.False(replaced.IsCompleted);
        replaced.OnEnd(fromFive);
        replaced.Feed(parent);
        Assert.True(replaced.IsCompleted);

        var output = new byte[1024];
        Assert.Equal(DrainStatus.Completed, parent.Drain(output, out int written));
        Assert.Equal([Rec.Of("c", 33), Rec.Of("d", 5), Rec.Of("e", 10)], Rec.Decode(output.AsSpan(0, written)));
        Assert.Equal(2, replaced.DroppedRecords); // a, and b (its two records combined before the cut)
    }

    [Fact]
    public void AStreamReceivedWholeDropsEverythingResentAndLeavesTheInputAlone()
    {
        var job = new SumJob();
        var parent = new StreamMerger(job, 1, MergeMode.Combine);
        parent.Append(0, Rec.Encode([Rec.Of("x", 1)]));
        var replaced = new ReplacedInput(job, tree: 0, input: 0, cut: null, dropsAll: true, senders: [2]);
        int slot = replaced.Attach(2);
        replaced.OnData(slot, Rec.Encode([Rec.Of("y", 2)]));
        replaced.OnEnd(slot);
        replaced.Feed(parent);
        Assert.True(replaced.IsCompleted);
        Assert.False(parent.IsFinished(0)); // the parent's own end of the stream finishes it, not the resend

        parent.Finish(0);
        var output = new byte[256];
        Assert.Equal(DrainStatus.Completed, parent.Drain(output, out int written));
        Assert.Equal([Rec.Of("x", 1)], Rec.Decode(output.AsSpan(0, written)));
    }
}

using Camdoop.MapReduce.DirectShuffle;

namespace Camdoop.MapReduce.Tests.DirectShuffle;

/// <summary>A receiver's admission queue: a bounded number at a time, the next as one ends, short streams more at once.</summary>
public sealed class AdmissionTests
{
    [Fact]
    public void AdmitsTheBoundAtOnceAndTheNextAsEachEnds()
    {
        var admitted = new List<int>();
        var admission = new Admission([(1, 0), (2, 0), (3, 0), (4, 0)], 2, (sender, _) => admitted.Add(sender));
        admission.Start();
        Assert.Equal([1, 2], admitted);
        admission.OnEnded(3, 0, 100); // not admitted: nothing frees
        Assert.Equal([1, 2], admitted);
        admission.OnEnded(2, 0, 100);
        Assert.Equal([1, 2, 3], admitted);
        Assert.Equal(2, admission.Admitted);
        Assert.Equal(1, admission.Waiting);
    }

    [Fact]
    public void AFailedNodeGivesUpItsSlotAndItsPlace()
    {
        var admitted = new List<int>();
        var admission = new Admission([(1, 0), (2, 0), (3, 0), (4, 0)], 1, (sender, _) => admitted.Add(sender));
        admission.Start();
        admission.Forget(2); // still waiting: it never will be admitted
        admission.Forget(1); // admitted: its slot goes to the next
        Assert.Equal([1, 3], admitted);
        Assert.Equal(1, admission.Waiting);
    }

    [Fact]
    public void AnAutomaticBoundGrowsWhenTheStreamsAreShorterThanAWindow()
    {
        var admitted = new List<int>();
        var children = Enumerable.Range(1, 20).Select(s => (s, 0));
        var admission = new Admission(children, 2, (sender, _) => admitted.Add(sender), budgetBytes: 256 * 1024, windowBytes: 90_000);
        admission.Start();
        Assert.Equal(2, admission.Bound);
        admission.OnEnded(1, 0, 32 * 1024); // 256 KiB holds eight such streams
        Assert.Equal(8, admission.Bound);
        Assert.Equal(9, admitted.Count);
        admission.OnEnded(2, 0, 1_000_000); // a long one: back to two initial windows
        Assert.Equal(2, admission.Bound);
        Assert.Equal(9, admitted.Count);
    }

    [Fact]
    public void AGuessSetsTheFirstBound() =>
        Assert.Equal(4, new Admission([(1, 0)], 2, (_, _) => { }, budgetBytes: 256 * 1024, windowBytes: 90_000, guessBytes: 64 * 1024).Bound);
}

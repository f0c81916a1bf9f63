using Camdoop.MapReduce.DirectShuffle;

namespace Camdoop.MapReduce.Tests.DirectShuffle;

/// <summary>
/// A receiver's admission queue: a fixed count at a time, the next as one ends; or a byte budget that admitted
/// streams reserve their first flights from, short streams giving theirs back as they arrive.
/// </summary>
public sealed class AdmissionTests
{
    private const long Budget = 256 * 1024;
    private const int Window = 90_000;

    [Fact]
    public void AdmitsTheBoundAtOnceAndTheNextAsEachEnds()
    {
        var admitted = new List<int>();
        var admission = new Admission([(1, 0), (2, 0), (3, 0), (4, 0)], 2, (sender, _) => admitted.Add(sender));
        admission.Start();
        Assert.Equal([1, 2], admitted);
        admission.OnEnded(3, 0, 100); // not admitted: nothing frees
        admission.OnReceived(1, 0, 50); // a fixed bound counts streams, not bytes
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
    public void WithNothingSeenEveryStreamReservesAWindowWhateverArrives()
    {
        var admitted = new List<int>();
        var admission = new Admission(Children(20), 2, (sender, _) => admitted.Add(sender), Budget, Window);
        admission.Start();
        Assert.Equal(2, admitted.Count); // two windows of 90,000 fit in 256 KiB, three do not
        admission.OnReceived(1, 0, 9_000); // the first segment of a stream says nothing of its length
        admission.OnReceived(2, 0, 9_000);
        Assert.Equal(2, admitted.Count);
        Assert.Equal(2 * Window, admission.Reserved);
    }

    [Fact]
    public void ShortStreamsAreAdmittedAsManyAsTheBufferHoldsAndLongOnesTwo()
    {
        var admitted = new List<int>();
        var admission = new Admission(Children(20), 2, (sender, _) => admitted.Add(sender), Budget, Window);
        admission.Start();
        admission.OnEnded(1, 0, 32 * 1024); // 256 KiB holds eight such streams: the one left and seven more
        Assert.Equal(9, admitted.Count);
        Assert.Equal(8 * 32 * 1024, admission.Reserved);
        admission.OnEnded(2, 0, 1_000_000); // a long one: every admitted stream holds a window, so none is added
        Assert.Equal(9, admitted.Count);
        Assert.Equal(7L * Window, admission.Reserved);
    }

    [Fact]
    public void AShortStreamGivesBackItsRoomAsItArrives()
    {
        var admitted = new List<int>();
        var admission = new Admission(Children(20), 2, (sender, _) => admitted.Add(sender), Budget, Window, guessBytes: 32 * 1024);
        admission.Start();
        Assert.Equal(8, admitted.Count); // the guess: eight first flights of 32 KiB
        admission.OnReceived(3, 0, 16 * 1024); // half of one flight arrived: not room for another
        Assert.Equal(8, admitted.Count);
        admission.OnReceived(3, 0, 32 * 1024); // all of it: room for one more, before the stream has ended
        Assert.Equal(9, admitted.Count);
        admission.OnReceived(4, 0, 200_000); // longer than a window: streams are long after all, each holds a window
        Assert.Equal(9L * Window, admission.Reserved);
        admission.OnEnded(4, 0, 200_000);
        Assert.Equal(9, admitted.Count);
    }

    private static IEnumerable<(int, int)> Children(int count) => Enumerable.Range(1, count).Select(s => (s, 0));
}

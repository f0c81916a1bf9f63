using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Tests.Engine;

public class EventTraceTests
{
    [Fact]
    public void EqualSequencesHashEquallyAndAnyFieldChangesTheHash()
    {
        static ulong Hash(Action<EventTrace> feed)
        {
            var trace = new EventTrace();
            feed(trace);
            return trace.Hash;
        }

        void Base(EventTrace t)
        {
            t.Record(100, EventKind.TransmitComplete, 5, 2, 9014);
            t.Record(110, EventKind.FrameArrival, 6, 3, 9014);
        }

        ulong baseline = Hash(Base);
        Assert.Equal(baseline, Hash(Base));
        Assert.NotEqual(baseline, Hash(t => { t.Record(101, EventKind.TransmitComplete, 5, 2, 9014); t.Record(110, EventKind.FrameArrival, 6, 3, 9014); }));
        Assert.NotEqual(baseline, Hash(t => { t.Record(100, EventKind.Timer, 5, 2, 9014); t.Record(110, EventKind.FrameArrival, 6, 3, 9014); }));
        Assert.NotEqual(baseline, Hash(t => { t.Record(100, EventKind.TransmitComplete, 4, 2, 9014); t.Record(110, EventKind.FrameArrival, 6, 3, 9014); }));
        Assert.NotEqual(baseline, Hash(t => { t.Record(100, EventKind.TransmitComplete, 5, 1, 9014); t.Record(110, EventKind.FrameArrival, 6, 3, 9014); }));
        Assert.NotEqual(baseline, Hash(t => { t.Record(100, EventKind.TransmitComplete, 5, 2, 9013); t.Record(110, EventKind.FrameArrival, 6, 3, 9014); }));
        // Order matters.
        Assert.NotEqual(baseline, Hash(t => { t.Record(110, EventKind.FrameArrival, 6, 3, 9014); t.Record(100, EventKind.TransmitComplete, 5, 2, 9014); }));
    }

    [Fact]
    public void KeepsOnlyTheFirstLines()
    {
        var trace = new EventTrace(maxLines: 2);
        for (int i = 0; i < 5; i++)
        {
            trace.Record(i, EventKind.Timer, i, 255, 0);
        }
        Assert.Equal(5, trace.Events);
        Assert.Equal(["0 Timer node=0 port=255 len=0", "1 Timer node=1 port=255 len=0"], trace.Lines);
    }
}

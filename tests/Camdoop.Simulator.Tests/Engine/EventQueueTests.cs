using Camdoop.Simulator.Engine;

namespace Camdoop.Simulator.Tests.Engine;

public class EventQueueTests
{
    private static List<(long Time, int Target)> Drain(EventQueue queue, long limit = long.MaxValue)
    {
        var popped = new List<(long, int)>();
        while (queue.TryPop(limit, out long time, out var ev))
        {
            popped.Add((time, ev.Target));
        }
        return popped;
    }

    [Fact]
    public void EventsComeOutByTimeThenInSchedulingOrder()
    {
        var queue = new EventQueue();
        queue.Push(30, SimEvent.ForAction(0));
        queue.Push(10, SimEvent.ForAction(1));
        queue.Push(20, SimEvent.ForAction(2));
        queue.Push(10, SimEvent.ForAction(3));
        queue.Push(10, SimEvent.ForAction(4));
        Assert.Equal(5, queue.Count);
        Assert.Equal(10, queue.NextTime);
        Assert.Equal([(10L, 1), (10L, 3), (10L, 4), (20L, 2), (30L, 0)], Drain(queue));
        Assert.Equal(0, queue.Count);
        Assert.Equal(long.MaxValue, queue.NextTime);
    }

    [Fact]
    public void PopStopsAtTheLimit()
    {
        var queue = new EventQueue();
        queue.Push(5, SimEvent.ForAction(0));
        queue.PushOrdered(7, SimEvent.ForAction(1));
        queue.Push(9, SimEvent.ForAction(2));
        Assert.Equal([(5L, 0), (7L, 1)], Drain(queue, limit: 8));
        Assert.Equal(1, queue.Count);
        Assert.Equal([(9L, 2)], Drain(queue, limit: 9));
    }

    [Fact]
    public void PayloadsSurviveTheTrip()
    {
        var queue = new EventQueue();
        queue.Push(1, SimEvent.ForTimer(node: 17, boot: 3, timerId: 0x1234_5678_9ABCL));
        queue.PushOrdered(2, SimEvent.ForLink(EventKind.FrameArrival, link: 3071, epoch: 9));
        Assert.True(queue.TryPop(long.MaxValue, out _, out var timer));
        Assert.Equal(new SimEvent(EventKind.Timer, 17, 3, 0x1234_5678_9ABCL), timer);
        Assert.True(queue.TryPop(long.MaxValue, out _, out var arrival));
        Assert.Equal(new SimEvent(EventKind.FrameArrival, 3071, 9, 0), arrival);
    }

    [Fact]
    public void TheOrderedLaneMergesWithTheHeapExactlyAsOneHeapWould()
    {
        var random = new Xoshiro256StarStar(7);
        var queue = new EventQueue(initialCapacity: 16);
        var reference = new List<(long Time, long Sequence, int Target)>();
        var popped = new List<(long Time, int Target)>();
        long now = 0, sequence = 0;
        int target = 0;
        for (int step = 0; step < 200_000; step++)
        {
            int action = random.Next(10);
            if (action < 4)
            {
                long time = now + random.NextLong(50);
                queue.Push(time, SimEvent.ForAction(target));
                reference.Add((time, sequence++, target++));
            }
            else if (action < 7)
            {
                // Mostly a constant delay (ordered), sometimes earlier than the lane's tail (falls back to the heap).
                long time = now + (random.Next(20) == 0 ? random.NextLong(10) : 30);
                queue.PushOrdered(time, SimEvent.ForAction(target));
                reference.Add((time, sequence++, target++));
            }
            else if (queue.TryPop(long.MaxValue, out long time, out var ev))
            {
                Assert.True(time >= now);
                now = time;
                popped.Add((time, ev.Target));
            }
        }
        popped.AddRange(Drain(queue));
        var expected = reference.OrderBy(r => r.Time).ThenBy(r => r.Sequence).Select(r => (r.Time, r.Target)).ToList();
        // Events popped interleaved with pushes: compare the multiset per time and the global order by (time, seq).
        Assert.Equal(expected.Count, popped.Count);
        var order = new Dictionary<int, long>();
        foreach (var r in reference)
        {
            order[r.Target] = r.Sequence;
        }
        for (int i = 1; i < popped.Count; i++)
        {
            var a = popped[i - 1];
            var b = popped[i];
            Assert.True(a.Time < b.Time || (a.Time == b.Time && order[a.Target] < order[b.Target]), $"out of order at {i}: {a} then {b}");
        }
        Assert.Equal(expected.Select(e => e.Target).Order(), popped.Select(p => p.Target).Order());
    }

    [Fact]
    public void SlotsAreReusedSoTheQueueDoesNotGrowWithTraffic()
    {
        var queue = new EventQueue(initialCapacity: 16);
        for (long t = 0; t < 1_000_000; t++)
        {
            queue.Push(t + 3, SimEvent.ForAction(0));
            queue.PushOrdered(t + 5, SimEvent.ForAction(1));
            Assert.True(queue.TryPop(long.MaxValue, out _, out _));
            Assert.True(queue.TryPop(long.MaxValue, out _, out _));
        }
        Assert.Equal(0, queue.Count);
        Assert.Equal(2_000_000, queue.Scheduled);
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (long t = 0; t < 100_000; t++)
        {
            queue.Push(t, SimEvent.ForAction(0));
            queue.TryPop(long.MaxValue, out _, out _);
        }
        Assert.Equal(before, GC.GetAllocatedBytesForCurrentThread());
    }
}

using Camdoop.Simulator.Events;
using Camdoop.Tests.Shared;

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
    public void EventsComeOutByTimeThenOrderKey()
    {
        var queue = new EventQueue();
        queue.Push(30, EventOrder.Of(1, 0), SimEvent.ForAction(0));
        queue.Push(10, EventOrder.Of(5, 1), SimEvent.ForAction(1));
        queue.Push(20, EventOrder.Of(1, 2), SimEvent.ForAction(2));
        queue.Push(10, EventOrder.Of(5, 3), SimEvent.ForAction(3));
        queue.Push(10, EventOrder.Of(2, 4), SimEvent.ForAction(4));
        Assert.Equal(5, queue.Count);
        Assert.Equal(10, queue.NextTime);
        Assert.True(queue.TryPeek(out long time, out ulong order));
        Assert.Equal((10L, EventOrder.Of(2, 4)), (time, order));
        Assert.Equal(2, EventOrder.EntityOf(order));
        // Same time: the smaller entity first, then one entity's events in the order they were scheduled.
        Assert.Equal([(10L, 4), (10L, 1), (10L, 3), (20L, 2), (30L, 0)], Drain(queue));
        Assert.Equal(0, queue.Count);
        Assert.Equal(long.MaxValue, queue.NextTime);
    }

    [Fact]
    public void RotatedTiesKeepEntitiesDistinctAndOneEntitysEventsInOrder()
    {
        // At any one time the rotation is a bijection on entity ids: simultaneous events of different entities never
        // share a key's entity part, whatever partition scheduled them.
        const int entities = 1 << 14;
        var firstWins = new int[4];
        for (long time = 0; time < 2_000; time += 37)
        {
            var seen = new HashSet<int>();
            for (int e = 0; e < entities; e++)
            {
                Assert.True(seen.Add(EventOrder.EntityOf(EventOrder.Of(e, 0, time))), $"entities collide at {time}");
            }
            Assert.True(EventOrder.Of(3, 10, time) < EventOrder.Of(3, 11, time));
            int winner = Enumerable.Range(0, 4).MinBy(e => EventOrder.Of(e, 0, time));
            firstWins[winner]++;
        }
        // And which of four simultaneous inputs comes first changes with the time.
        Assert.All(firstWins, wins => Assert.True(wins > 0, $"an input never came first: [{string.Join(", ", firstWins)}]"));
    }

    [Fact]
    public void PopStopsAtTheLimit()
    {
        var queue = new EventQueue();
        queue.Push(5, 0, SimEvent.ForAction(0));
        queue.PushOrdered(7, 1, SimEvent.ForAction(1));
        queue.Push(9, 2, SimEvent.ForAction(2));
        Assert.Equal([(5L, 0), (7L, 1)], Drain(queue, limit: 8));
        Assert.Equal(1, queue.Count);
        Assert.Equal([(9L, 2)], Drain(queue, limit: 9));
    }

    [Fact]
    public void PayloadsSurviveTheTrip()
    {
        var queue = new EventQueue();
        queue.Push(1, 0, SimEvent.ForTimer(node: 17, boot: 3, timerId: 0x1234_5678_9ABCL));
        queue.PushOrdered(2, 1, SimEvent.ForLink(EventKind.FrameArrival, link: 3071, epoch: 9));
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
        // The reference: every pending event, sorted as one heap would pop them.
        var pending = new SortedSet<(long Time, ulong Key, int Target)>();
        long now = 0, sequence = 0;
        int target = 0, pops = 0;
        for (int step = 0; step < 200_000; step++)
        {
            int action = random.Next(10);
            // Order keys from a few entities, so equal times are common and keys arrive out of order.
            ulong key = EventOrder.Of(random.Next(8), sequence++);
            if (action < 4)
            {
                long time = now + random.NextLong(50);
                queue.Push(time, key, SimEvent.ForAction(target));
                pending.Add((time, key, target++));
            }
            else if (action < 7)
            {
                // Mostly a constant delay (ordered), sometimes earlier than the lane's tail (falls back to the heap).
                long time = now + (random.Next(20) == 0 ? random.NextLong(10) : 30);
                queue.PushOrdered(time, key, SimEvent.ForAction(target));
                pending.Add((time, key, target++));
            }
            else if (queue.TryPop(long.MaxValue, out long time, out var ev))
            {
                var expected = pending.Min;
                Assert.Equal((expected.Time, expected.Target), (time, ev.Target));
                pending.Remove(expected);
                now = time;
                pops++;
            }
            else
            {
                Assert.Empty(pending);
            }
        }
        foreach (var (time, target2) in Drain(queue))
        {
            var expected = pending.Min;
            Assert.Equal((expected.Time, expected.Target), (time, target2));
            pending.Remove(expected);
        }
        Assert.Empty(pending);
        Assert.True(pops > 50_000);
    }

    [Fact]
    public void SlotsAreReusedSoTheQueueDoesNotGrowWithTraffic()
    {
        var queue = new EventQueue(initialCapacity: 16);
        for (long t = 0; t < 1_000_000; t++)
        {
            queue.Push(t + 3, (ulong)t, SimEvent.ForAction(0));
            queue.PushOrdered(t + 5, (ulong)t, SimEvent.ForAction(1));
            Assert.True(queue.TryPop(long.MaxValue, out _, out _));
            Assert.True(queue.TryPop(long.MaxValue, out _, out _));
        }
        Assert.Equal(0, queue.Count);
        Assert.Equal(2_000_000, queue.Scheduled);
        // A slot per event would allocate in every pass.
        long least = ThreadAllocations.LeastOf(5, pass =>
        {
            for (long t = 0; t < 100_000; t++)
            {
                queue.Push(t, (ulong)t, SimEvent.ForAction(0));
                queue.TryPop(long.MaxValue, out _, out _);
            }
        });
        Assert.Equal(0, least);
    }
}

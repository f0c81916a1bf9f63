using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// The front-end's memory budget alone: what fits is taken at once, what does not waits its turn and is refused in
/// one line when no room comes in time, and the total held never passes the limit.
/// </summary>
public class FrontEndMemoryBudgetTests
{
    private static readonly TimeSpan Long = TimeSpan.FromMinutes(5);

    [Fact]
    public void WhatFitsIsTakenAtOnceAndWhatDoesNotIsNot()
    {
        var budget = new FrontEndMemoryBudget(1000, Long);
        Assert.True(budget.TryReserve(600));
        Assert.True(budget.TryReserve(400));
        Assert.False(budget.TryReserve(1));
        Assert.Equal(1000, budget.Held);
        budget.Release(400);
        Assert.True(budget.TryReserve(0));
        Assert.True(budget.TryReserve(400));
        budget.Release(1000);
        Assert.Equal(0, budget.Held);
        Assert.Equal(1000, budget.Peak);
        Assert.Equal(0, budget.Refusals);
        Assert.Throws<InvalidOperationException>(() => budget.Release(1));
    }

    [Fact]
    public async Task NoRoomWithinTheWaitIsOneLineNamingWhatIsHeldAndTheLimit()
    {
        var budget = new FrontEndMemoryBudget(1000, TimeSpan.FromMilliseconds(50));
        await budget.ReserveAsync(700, CancellationToken.None);
        var refused = await Assert.ThrowsAsync<FrontEndException>(() => budget.ReserveAsync(301, CancellationToken.None).AsTask());
        Assert.Equal("the front-end is holding 700 bytes for its clients, at its limit of 1000; try again later", refused.Message);
        Assert.Equal(1, budget.Refusals);
        Assert.Equal(0, budget.Waiting);
        Assert.Equal(700, budget.Held);
        // More than the whole budget is refused at once: no wait could make room for it.
        var never = Assert.Throws<FrontEndException>(() => budget.ReserveAsync(1001, CancellationToken.None));
        Assert.Equal("1001 bytes are more than the front-end holds for all its clients at once (1000 bytes)", never.Message);
        Assert.Equal(2, budget.Refusals);
        Assert.Equal(0, budget.Waiting);
    }

    [Fact]
    public async Task WaitingReservationsAreGrantedInTurnAsRoomComes()
    {
        var budget = new FrontEndMemoryBudget(1000, Long);
        Assert.True(budget.TryReserve(1000));
        var large = budget.ReserveAsync(800, CancellationToken.None).AsTask();
        var small = budget.ReserveAsync(100, CancellationToken.None).AsTask();
        Assert.Equal(2, budget.Waiting);
        // A newcomer does not pass those waiting, even when it would fit.
        budget.Release(300);
        Assert.False(large.IsCompleted);
        Assert.False(small.IsCompleted);
        Assert.False(budget.TryReserve(100));
        budget.Release(700);
        await large.WaitAsync(Long);
        await small.WaitAsync(Long);
        Assert.Equal(900, budget.Held);
        Assert.Equal(0, budget.Waiting);
        Assert.Equal(0, budget.Refusals);
    }

    [Fact]
    public async Task AWaiterThatGivesUpLetsThoseBehindItThrough()
    {
        var budget = new FrontEndMemoryBudget(1000, Long);
        Assert.True(budget.TryReserve(500));
        using var cancel = new CancellationTokenSource();
        var large = budget.ReserveAsync(900, cancel.Token).AsTask();
        var small = budget.ReserveAsync(300, CancellationToken.None).AsTask();
        Assert.False(small.IsCompleted);
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => large);
        await small.WaitAsync(Long);
        Assert.Equal(800, budget.Held);
        // A cancelled wait is the client gone, not a refusal.
        Assert.Equal(0, budget.Refusals);
    }

    [Fact]
    public async Task ManyThreadsNeverHoldMoreThanTheLimitAndGiveEverythingBack()
    {
        const long Limit = 10_000;
        var budget = new FrontEndMemoryBudget(Limit, TimeSpan.FromMilliseconds(20));
        long refusals = 0;
        long granted = 0;
        var workers = Enumerable.Range(0, 8).Select(w => Task.Run(async () =>
        {
            var random = new Random(w);
            for (int i = 0; i < 1000; i++)
            {
                long bytes = random.Next(1, 4000);
                try
                {
                    if (random.Next(2) == 0)
                    {
                        if (!budget.TryReserve(bytes))
                        {
                            continue;
                        }
                    }
                    else
                    {
                        await budget.ReserveAsync(bytes, CancellationToken.None);
                    }
                }
                catch (FrontEndException)
                {
                    Interlocked.Increment(ref refusals);
                    continue;
                }
                Interlocked.Increment(ref granted);
                Assert.InRange(budget.Held, bytes, Limit);
                if (random.Next(4) == 0)
                {
                    await Task.Yield();
                }
                budget.Release(bytes);
            }
        })).ToArray();
        await Task.WhenAll(workers).WaitAsync(Long);
        Assert.Equal(0, budget.Held);
        Assert.Equal(0, budget.Waiting);
        Assert.InRange(budget.Peak, 1, Limit);
        Assert.Equal(refusals, budget.Refusals);
        Assert.True(granted > 0);
    }
}

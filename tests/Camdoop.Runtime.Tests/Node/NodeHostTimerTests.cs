using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;

namespace Camdoop.Runtime.Tests.Node;

public class NodeHostTimerTests
{
    private static HostFixture Started()
    {
        var f = new HostFixture();
        f.Host.Start();
        return f;
    }

    [Fact]
    public void TimerFiresAtItsDueTimeOnce()
    {
        var f = Started();
        var fired = new List<long>();
        f.Host.SetTimer(100, () => fired.Add(f.Host.Now));
        f.Driver.AdvanceTo(99);
        Assert.Empty(fired);
        f.Driver.AdvanceTo(100);
        Assert.Equal([100L], fired);
        f.Driver.AdvanceTo(1000);
        Assert.Single(fired);
    }

    [Fact]
    public void CancelledTimerNeverFiresAndCancellingAgainIsHarmless()
    {
        var f = Started();
        int before = f.Host.PendingTimers;
        bool fired = false;
        var handle = f.Host.SetTimer(10, () => fired = true);
        Assert.True(handle.IsSet);
        Assert.Equal(before + 1, f.Host.PendingTimers);
        f.Host.CancelTimer(handle);
        f.Host.CancelTimer(handle);
        f.Host.CancelTimer(default);
        Assert.Equal(before, f.Host.PendingTimers);
        f.Driver.AdvanceTo(20);
        Assert.False(fired);
    }

    [Fact]
    public void StaleGenerationIsIgnoredWhenTheSlotIsReused()
    {
        var f = Started();
        int first = 0, second = 0;
        var stale = f.Host.SetTimer(50, () => first++);
        f.Host.CancelTimer(stale);
        var fresh = f.Host.SetTimer(70, () => second++);
        Assert.Equal((int)stale.Id, (int)fresh.Id); // same slot
        Assert.NotEqual(stale.Id, fresh.Id);        // new generation

        f.Host.FireTimer(stale.Id);  // the driver delivering the cancelled timer late
        Assert.Equal((0, 0), (first, second));

        f.Driver.AdvanceTo(70);
        Assert.Equal((0, 1), (first, second));
        f.Host.FireTimer(fresh.Id);  // firing again is a no-op
        f.Host.FireTimer(0);
        f.Host.FireTimer(long.MaxValue);
        Assert.Equal((0, 1), (first, second));
    }

    [Fact]
    public void ManyTimersGrowTheSlabAndFireInDueOrder()
    {
        var f = Started();
        var fired = new List<int>();
        for (int i = 0; i < 300; i++)
        {
            int n = i;
            f.Host.SetTimer(1000 - i, () => fired.Add(n));
        }
        f.Driver.AdvanceTo(1000);
        Assert.Equal(Enumerable.Range(0, 300).Reverse(), fired);
    }

    [Fact]
    public void CallbacksMayRearmAndNegativeDelaysMeanNow()
    {
        var f = Started();
        var times = new List<long>();
        void Tick()
        {
            times.Add(f.Host.Now);
            if (times.Count < 3)
            {
                f.Host.SetTimer(5, Tick);
            }
        }
        f.Driver.AdvanceTo(7);
        f.Host.SetTimer(-3, Tick);
        f.Driver.AdvanceTo(100);
        Assert.Equal([7L, 12L, 17L], times);
    }

    [Fact]
    public void TimersDoNotFireAfterStop()
    {
        var f = Started();
        bool fired = false;
        f.Host.SetTimer(10, () => fired = true);
        f.Host.Stop();
        f.Driver.AdvanceTo(10);
        Assert.False(fired);
        Assert.True(f.Host.IsHalted);
    }

    [Fact]
    public void FaultIsolationCountsAThrowingTimerInsteadOfCrashing()
    {
        var f = new HostFixture(new NodeOptions { IsolateServiceFaults = true, AssumeLinksUpAtStart = true });
        f.Host.Start();
        f.Host.SetTimer(1, () => throw new InvalidOperationException("boom"));
        f.Driver.AdvanceTo(1);
        Assert.Equal(1, f.Host.Counters.ServiceFaults);
        Assert.Contains(f.Driver.Logs, l => l.Level == LogLevel.Error && l.Message.Contains("boom", StringComparison.Ordinal));

        var strict = Started();
        strict.Host.SetTimer(1, () => throw new InvalidOperationException("boom"));
        Assert.Throws<InvalidOperationException>(() => strict.Driver.AdvanceTo(1));
    }
}

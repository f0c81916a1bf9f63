using Camdoop.Simulator.Energy;

namespace Camdoop.Simulator.Tests.Energy;

/// <summary>The 802.3az transmitter alone, with T_w = 10 ns and T_s = 100 ns: start times and low-power idle by hand.</summary>
public class EeeTransmitterTests
{
    [Fact]
    public void ALinkStartsAsleepAndSleepsAgainAfterItsLastFrame()
    {
        var eee = new EeeTransmitter(wakeTime: 10, sleepTime: 100);
        Assert.Equal(1010, eee.StartAfterIdle(1000, waiting: 1, capacity: 2)); // asleep since 0: LPI 0..1000
        eee.Ended(1050);
        Assert.Equal(1000, eee.LowPowerTime(1100)); // still going to sleep until 1150
        Assert.Equal(1000 + 850, eee.LowPowerTime(2000));
        Assert.Equal(1, eee.Wakes);
    }

    [Fact]
    public void TheNextFrameRightAfterTheLastDoesNotWakeAgain()
    {
        var eee = new EeeTransmitter(10, 100);
        eee.StartAfterIdle(0, 1, 2);
        eee.Ended(500);
        Assert.Equal(500, eee.StartAfterIdle(500, 1, 2));
        Assert.Equal(1, eee.Wakes);
    }

    [Fact]
    public void AWakeAfterTheEndDoesNotCountPastIt()
    {
        var eee = new EeeTransmitter(10, 100);
        eee.StartAfterIdle(1000, 1, 2);
        eee.Ended(1050);
        Assert.Equal(3010, eee.StartAfterIdle(3000, 1, 2)); // LPI 1150..3000
        Assert.Equal(1000 + 850, eee.LowPowerTime(2000));
        Assert.Equal(1000 + 1850, eee.LowPowerTime(3005)); // waking: no LPI after 3000
    }

    [Fact]
    public void CoalescingHoldsUntilTheTriggerThenWakesAtOnce()
    {
        var eee = new EeeTransmitter(10, 100, holdTime: 500, packetTrigger: 3);
        Assert.Equal(3510, eee.StartAfterIdle(3000, 1, 16));
        Assert.Equal(-1, eee.OnQueued(3100, 2, 16));
        Assert.Equal(3210, eee.OnQueued(3200, 3, 16));
        Assert.Equal(-1, eee.OnQueued(3205, 4, 16)); // already waking
        eee.Ended(3300);
        Assert.Equal(3200 + 600, eee.LowPowerTime(4000)); // 0..3200, then 3400..4000
    }

    [Fact]
    public void LosingTheQueuedFramesWhileHeldLeavesTheLinkAsleep()
    {
        var eee = new EeeTransmitter(10, 100, holdTime: 500, packetTrigger: 3);
        eee.StartAfterIdle(3000, 1, 16);
        eee.Abandon(3200);
        Assert.Equal(4000, eee.LowPowerTime(4000)); // never woke
        Assert.Equal(5010, eee.StartAfterIdle(4500, 1, 2)); // held again, from 4500
    }
}

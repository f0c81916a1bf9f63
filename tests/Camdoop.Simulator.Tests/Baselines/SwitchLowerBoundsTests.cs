using Camdoop.Experiments.Baselines;

namespace Camdoop.Simulator.Tests.Baselines;

public class SwitchLowerBoundsTests
{
    [Fact]
    public void OneReducerIsBoundByItsDownlinkWithoutItsOwnData()
    {
        // 4 servers, 1 reducer on server 2; each server holds 1,000 bytes for it.
        var demand = new ShuffleDemand(4, [2]);
        for (int s = 0; s < 4; s++)
        {
            demand[s, 0] = 1000;
        }
        var bounds = SwitchLowerBounds.Compute(demand);
        // Server 2's own 1,000 bytes stay local: 3,000 bytes cross its 1 Gbps downlink.
        Assert.Equal(3000 * 8 / 1e9, bounds.Switch1G, 12);
        Assert.Equal(3000 * 8 / 6e9, bounds.Switch6G, 12);
        // All four servers share one rack: no cross-rack traffic, the server bound holds.
        Assert.Equal(bounds.Switch1G, bounds.Switch1GOversubscribed, 12);
    }

    [Fact]
    public void AllToAllIsBoundByTheBusiestUplink()
    {
        var demand = new ShuffleDemand(3, [0, 1, 2]);
        for (int s = 0; s < 3; s++)
        {
            for (int r = 0; r < 3; r++)
            {
                demand[s, r] = 100;
            }
        }
        demand[1, 0] = 700; // server 1 sends 700 + 100 = 800 bytes out; server 0 receives 700 + 100.
        var bounds = SwitchLowerBounds.Compute(demand);
        Assert.Equal(800 * 8 / 1e9, bounds.Switch1G, 12);
    }

    [Fact]
    public void OversubscribedRacksBindWhenMostTrafficLeavesTheRack()
    {
        // 80 servers in two racks of 40; the reducer is in rack 0; 40 servers of rack 1 send 1 MB each.
        var demand = new ShuffleDemand(80, [0]);
        for (int s = 40; s < 80; s++)
        {
            demand[s, 0] = 1_000_000;
        }
        var bounds = SwitchLowerBounds.Compute(demand);
        double serverBound = 40_000_000 * 8 / 1e9;
        double rackBound = 40_000_000 * 8 / (40 * 1e9 / 4);
        Assert.Equal(serverBound, bounds.Switch1G, 9);
        Assert.Equal(Math.Max(serverBound, rackBound), bounds.Switch1GOversubscribed, 9);
        Assert.True(rackBound < serverBound); // 10 Gbps rack uplink vs one 1 Gbps downlink
    }

    [Fact]
    public void APartialLastRackHasAProportionallySmallerUplink()
    {
        // 50 servers: rack 0 has 40, rack 1 has 10 servers (2.5 Gbps uplink). Every server sends 1 MB to each reducer in the other rack.
        var demand = new ShuffleDemand(50, [0, 45]);
        for (int s = 0; s < 50; s++)
        {
            demand[s, 0] = 1_000_000;
            demand[s, 1] = 1_000_000;
        }
        var bounds = SwitchLowerBounds.Compute(demand);
        // Rack 1 (10 servers) sends 10 MB out to reducer 0 and receives 40 MB for reducer 1.
        double rack1 = 40_000_000 * 8 / (10 * 1e9 / 4);
        Assert.Equal(Math.Max(bounds.Switch1G, rack1), bounds.Switch1GOversubscribed, 9);
    }
}

using Camdoop.Experiments.NetAgg;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// NetAgg's trees on 27 servers in racks of 9 (racks 0, 1, 2 and a core), reducer on server 0 in rack 0. With every
/// switch's box the boxes are 27, 28, 29 (racks) and 30 (core); with the upper tier only, 27 is the core's.
/// </summary>
public sealed class NetAggPlanTests
{
    private static NetAggPlan Plan(AggBoxPlacement placement, int trees = 1) =>
        new(NetAggLayout.For(new SwitchedNetworkOptions { Kind = NetworkKind.NetAgg, RackSize = 9, AggBoxes = new() { Placement = placement } }, 27), [0], trees);

    [Fact]
    public void WorkersSendToTheirRacksBoxAndBoxesUpThePathToTheReducer()
    {
        var plan = Plan(AggBoxPlacement.All);
        Assert.Equal(27, plan.ParentOf(0, 0, 1)); // same rack: the rack's box
        Assert.Equal(28, plan.ParentOf(0, 0, 9)); // rack 1: its own rack's box first
        Assert.Equal(29, plan.ParentOf(0, 0, 26));
        Assert.Equal(30, plan.ParentOf(0, 0, 28)); // rack boxes to the core's
        Assert.Equal(30, plan.ParentOf(0, 0, 29));
        Assert.Equal(27, plan.ParentOf(0, 0, 30)); // the core's to the reducer's rack's
        Assert.Equal(-1, plan.ParentOf(0, 0, 27)); // which sends to the reducer
        // Rack 0's box: 8 workers and the core's box; racks 1 and 2: 9 workers each; the core: two boxes; the reducer: one.
        Assert.Equal(9, plan.ChildrenOf(0, 0, 27));
        Assert.Equal(9, plan.ChildrenOf(0, 0, 28));
        Assert.Equal(9, plan.ChildrenOf(0, 0, 29));
        Assert.Equal(2, plan.ChildrenOf(0, 0, 30));
        Assert.Equal(1, plan.ChildrenOf(0, 0, 0));
        Assert.Equal(0, plan.ChildrenOf(0, 0, 5));
    }

    [Fact]
    public void WithOnlyTheCoresBoxTheReducersRackSendsStraightToIt()
    {
        var plan = Plan(AggBoxPlacement.Upper);
        Assert.Equal(-1, plan.ParentOf(0, 0, 1));
        Assert.Equal(27, plan.ParentOf(0, 0, 9));
        Assert.Equal(27, plan.ParentOf(0, 0, 20));
        Assert.Equal(-1, plan.ParentOf(0, 0, 27));
        Assert.Equal(18, plan.ChildrenOf(0, 0, 27));
        Assert.Equal(9, plan.ChildrenOf(0, 0, 0)); // 8 workers of rack 0 and the box
    }

    [Fact]
    public void EveryTreeTakesTheSameBoxes()
    {
        var plan = Plan(AggBoxPlacement.All, trees: 3);
        Assert.Equal(3, plan.Trees);
        for (int node = 0; node < 31; node++)
        {
            Assert.Equal(plan.ParentOf(0, 0, node), plan.ParentOf(0, 2, node));
            Assert.Equal(plan.ChildrenOf(0, 0, node), plan.ChildrenOf(0, 2, node));
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => plan.ParentOf(0, 3, 1));
    }

    [Fact]
    public void AFailedBoxsChildrenSendToTheNextBoxOnThePath()
    {
        var plan = Plan(AggBoxPlacement.All).Without(30);
        Assert.Equal(27, plan.ParentOf(0, 0, 28));
        Assert.Equal(27, plan.ParentOf(0, 0, 29));
        Assert.Equal(10, plan.ChildrenOf(0, 0, 27));
        Assert.False(plan.Sends(0, 30));
        Assert.Equal(0, plan.ChildrenOf(0, 0, 30));
        var noRackBox = plan.Without(28);
        Assert.Equal(27, noRackBox.ParentOf(0, 0, 9)); // rack 1's workers skip both failed boxes
        Assert.Equal(18, noRackBox.ChildrenOf(0, 0, 27));
    }

    [Fact]
    public void BoxesOffEveryPathForATaskSendNothing()
    {
        // Reducers on servers 0 and 9: for each, the other racks' boxes feed the core's.
        var layout = NetAggLayout.For(new SwitchedNetworkOptions { Kind = NetworkKind.NetAgg, RackSize = 9 }, 27);
        var plan = new NetAggPlan(layout, [0, 9], 1);
        Assert.True(plan.Sends(1, 27));
        Assert.Equal(30, plan.ParentOf(1, 0, 27));
        Assert.Equal(28, plan.ParentOf(1, 0, 30));
        Assert.Equal(-1, plan.ParentOf(1, 0, 28));
        Assert.Equal(1, plan.ChildrenOf(1, 0, 9));
        Assert.False(plan.Sends(1, 9));
        // One rack: no core, no uplinks; the rack's box is the whole tree.
        var oneRack = new NetAggPlan(NetAggLayout.For(new SwitchedNetworkOptions { Kind = NetworkKind.NetAgg }, 27), [4], 1);
        Assert.Equal(27, oneRack.ParentOf(0, 0, 0));
        Assert.Equal(26, oneRack.ChildrenOf(0, 0, 27));
        Assert.Equal(28, oneRack.Nodes);
    }
}

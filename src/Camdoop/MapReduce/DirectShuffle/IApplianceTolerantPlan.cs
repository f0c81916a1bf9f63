namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>A plan whose appliances may fail: their children then send to the next node on the path (NetAgg's boxes).</summary>
public interface IApplianceTolerantPlan : IAggregationPlan
{
    /// <summary>Servers and appliances: node indices 0 to Nodes - 1.</summary>
    new int Nodes { get; }

    int? IAggregationPlan.Nodes => Nodes;

    /// <summary>The same trees with appliance <paramref name="node"/> failed as well.</summary>
    IApplianceTolerantPlan WithoutAppliance(int node);
}

using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Trees;
using Camdoop.Simulator.Energy;

namespace Camdoop.Experiments;

/// <summary>
/// What every simulated run of a job or a sweep shares: its generated data, the servers' settings and trees, how work
/// and energy are accounted, where data goes and whether outputs are checked. <see cref="JobSimulationOptions"/> and
/// each sweep's options hold one, so a sweep hands its settings to its runs whole.
/// </summary>
public sealed record SimulationSettings
{
    /// <summary>Generated input bytes per server (the paper's simulator used 2 MB).</summary>
    public long BytesPerServer { get; init; } = 2_000_000;

    /// <summary>Seeds the generated data and everything random in the simulation.</summary>
    public ulong Seed { get; init; } = 1;

    /// <summary>Service settings of every server (memory budget, windows, timeouts); null keeps the defaults.</summary>
    public CamdoopServiceOptions? Service { get; init; }

    /// <summary>The six disjoint trees: the paper's, or the shallower default.</summary>
    public TreeFamily Trees { get; init; } = TreeFamily.Shallow;

    /// <summary>
    /// How servers' merge and reduce work is priced in virtual time, and the rate the map phase is modelled at (it
    /// still runs outside virtual time); null: work is free, as in the Camdoop paper's simulator.
    /// </summary>
    public ComputeModel? Compute { get; init; }

    /// <summary>The energy model the network's ports account under (null: energy is not measured). EEE also delays frames.</summary>
    public EnergyModel? Energy { get; init; }

    /// <summary>Parent directory of the simulation's files: chunks, server data directories, map runs (default: <see cref="SimulationScratch"/>).</summary>
    public string? DataRoot { get; init; }

    /// <summary>Run the single-process reference MapReduce over the same input and compare every reduce output (small runs).</summary>
    public bool Verify { get; init; }

    public void Validate()
    {
        if (BytesPerServer < 1)
        {
            throw new ArgumentException("bytes per server must be positive");
        }
        Service?.Validate();
    }
}

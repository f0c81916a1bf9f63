using BenchmarkDotNet.Running;
using Camdoop.Benchmarks.ChunkStore;
using Camdoop.Benchmarks.Links;
using Camdoop.Benchmarks.Simulator;

namespace Camdoop.Benchmarks;

public static class Program
{
    /// <summary>
    /// BenchmarkDotNet benchmarks (e.g. --filter '*FrameCodec*'), or `link-probe [options]` for the raw-Ethernet
    /// link throughput probe, which needs two network namespaces and so cannot run under BenchmarkDotNet, or
    /// `switch-speed [torus] [MB] [min RTO ms]` for the speed of the switched simulation under TCP incast and permutation,
    /// `shuffle-energy [torus] [job] [KB] [models]` for one job's network energy on the torus and behind a switch, or
    /// `scrub-cost [GB] [chunk MB] [directory]` for the CPU the chunk store's scrubber spends per GB it checks.
    /// </summary>
    public static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "link-probe")
        {
            return LinkThroughputBenchmark.Run(args[1..], Console.Out);
        }
        if (args.Length > 0 && args[0] == "switch-speed")
        {
            return SwitchedSpeedBenchmark.Run(args[1..], Console.Out);
        }
        if (args.Length > 0 && args[0] == "scrub-cost")
        {
            return ScrubCostBenchmark.Run(args[1..], Console.Out);
        }
        if (args.Length > 0 && args[0] == "shuffle-energy")
        {
            return ShuffleEnergyBenchmark.Run(args[1..], Console.Out);
        }
        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
        return 0;
    }
}

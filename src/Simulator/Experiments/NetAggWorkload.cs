using Camdoop.MapReduce.DataGen;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>
/// The NetAgg paper's simulated workload (§4.1), as this simulator reads it. Flow sizes follow a Pareto distribution
/// (mean 100 KB, shape 1.05); every flow starts at once; 46 % of the flows are aggregatable, from partition/aggregate
/// requests whose worker counts follow a power law with 61 % of requests under 10 workers, each request's workers on
/// servers as close to each other as possible, their output <see cref="OutputRatio"/> of their input; the other flows
/// are background traffic between two servers, which no design aggregates. The paper sets the number of flows by a
/// 15 % load on the edge links and does not say over what time for flows that all start at once: here
/// <see cref="EdgeLoad"/> of the servers' edge links carry one flow each (no server sends two).
/// </summary>
public sealed record NetAggWorkloadOptions
{
    public required Torus Torus { get; init; }

    /// <summary>Share of the servers that send a flow.</summary>
    public double EdgeLoad { get; init; } = 0.15;

    /// <summary>Share of the flows that belong to aggregatable requests.</summary>
    public double AggregatableShare { get; init; } = 0.46;

    /// <summary>
    /// α, a request's output over its input. Merging by key cannot make it less than 1/W for W workers (every worker
    /// with the same keys): a request of fewer than 1/α workers gets 1/W.
    /// </summary>
    public double OutputRatio { get; init; } = 0.1;

    public long MeanFlowBytes { get; init; } = 100_000;

    public double ParetoShape { get; init; } = 1.05;

    /// <summary>The Pareto tail cut here (shape 1.05 has a mean only just finite: one flow in a thousand passes 40 MB).</summary>
    public long MaxFlowBytes { get; init; } = 64L * 1024 * 1024;

    public int MaxWorkers { get; init; } = 100;

    /// <summary>Share of requests with fewer than 10 workers (the power law's exponent is fitted to it).</summary>
    public double FewWorkersShare { get; init; } = 0.61;

    public ulong Seed { get; init; } = 1;

    public void Validate()
    {
        ArgumentNullException.ThrowIfNull(Torus);
        if (EdgeLoad is <= 0 or > 1 || AggregatableShare is < 0 or > 1 || OutputRatio is <= 0 or > 1 || FewWorkersShare is <= 0 or >= 1)
        {
            throw new ArgumentException("the edge load must be in (0, 1], the aggregatable share in [0, 1], α in (0, 1] and the share of small requests in (0, 1)");
        }
        if (ParetoShape <= 1 || MeanFlowBytes < 64 || MaxFlowBytes < MeanFlowBytes || MaxWorkers < 10)
        {
            throw new ArgumentException("flow sizes need a Pareto shape above 1, a mean of at least 64 bytes below the cut, and up to at least 10 workers");
        }
        if ((int)Math.Round(EdgeLoad * Torus.Count) < 2)
        {
            throw new ArgumentException($"{EdgeLoad:P0} of {Torus.Count} servers is fewer than two flows");
        }
    }
}

/// <summary>
/// One request of the workload: its workers each send a flow of <paramref name="BytesPerWorker"/> to
/// <paramref name="Reducer"/>, aggregated on the way (when <paramref name="Aggregatable"/>) down to
/// <paramref name="OutputRatio"/> of their input, or a background flow (one worker, nothing to aggregate).
/// </summary>
public sealed record FlowGroup(int Index, bool Aggregatable, IReadOnlyList<int> Workers, int Reducer, long BytesPerWorker, double OutputRatio);

/// <summary>Draws the requests and background flows of <see cref="NetAggWorkloadOptions"/>, the same for the same options.</summary>
public static class NetAggWorkload
{
    public static IReadOnlyList<FlowGroup> Generate(NetAggWorkloadOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        int n = options.Torus.Count;
        int flows = (int)Math.Round(options.EdgeLoad * n);
        int aggregatable = (int)Math.Round(flows * options.AggregatableShare);
        var random = new DeterministicRandom(options.Seed, stream: 0x4E41_6767);
        double exponent = PowerLawExponent(options.MaxWorkers, options.FewWorkersShare);
        double weights = Weight(exponent, options.MaxWorkers, below: options.MaxWorkers + 1);
        var busy = new bool[n];
        var groups = new List<FlowGroup>();
        int left = aggregatable;
        while (left >= 2)
        {
            int workers = Math.Min(DrawWorkers(random, exponent, weights, options.MaxWorkers), Math.Min(left, n - 1));
            var placed = Nearby(random, busy, workers);
            int reducer = OtherServer(random, n, placed);
            groups.Add(new FlowGroup(groups.Count, true, placed, reducer, DrawFlowBytes(random, options),
                Math.Max(options.OutputRatio, 1.0 / workers)));
            left -= workers;
        }
        for (int f = aggregatable - left; f < flows; f++)
        {
            var source = Nearby(random, busy, 1);
            groups.Add(new FlowGroup(groups.Count, false, source, OtherServer(random, n, source), DrawFlowBytes(random, options), 1));
        }
        return groups;
    }

    /// <summary>
    /// β of P(W = w) ∝ w^-β over 2 .. <paramref name="maxWorkers"/> with P(W &lt; 10) = <paramref name="fewShare"/>,
    /// by bisection (the share grows with β).
    /// </summary>
    public static double PowerLawExponent(int maxWorkers, double fewShare)
    {
        double low = -5, high = 10;
        for (int i = 0; i < 100; i++)
        {
            double mid = (low + high) / 2;
            if (FewShare(mid, maxWorkers) < fewShare)
            {
                low = mid;
            }
            else
            {
                high = mid;
            }
        }
        return (low + high) / 2;
    }

    /// <summary>P(W &lt; 10) under exponent <paramref name="exponent"/>.</summary>
    public static double FewShare(double exponent, int maxWorkers) =>
        Weight(exponent, maxWorkers, below: 10) / Weight(exponent, maxWorkers, below: maxWorkers + 1);

    /// <summary>The power law's weight w^-β summed over 2 .. <paramref name="maxWorkers"/>, w below <paramref name="below"/>.</summary>
    private static double Weight(double exponent, int maxWorkers, int below)
    {
        double sum = 0;
        for (int w = 2; w <= maxWorkers && w < below; w++)
        {
            sum += Math.Pow(w, -exponent);
        }
        return sum;
    }

    /// <summary>A worker count, <paramref name="weights"/> being the power law's whole weight (drawn once per workload).</summary>
    private static int DrawWorkers(DeterministicRandom random, double exponent, double weights, int maxWorkers)
    {
        double u = random.NextDouble() * weights;
        for (int w = 2; w < maxWorkers; w++)
        {
            u -= Math.Pow(w, -exponent);
            if (u < 0)
            {
                return w;
            }
        }
        return maxWorkers;
    }

    /// <summary>A Pareto draw of mean <see cref="NetAggWorkloadOptions.MeanFlowBytes"/> (scale = mean (a - 1) / a), cut at the maximum.</summary>
    public static long DrawFlowBytes(DeterministicRandom random, NetAggWorkloadOptions options)
    {
        ArgumentNullException.ThrowIfNull(random);
        ArgumentNullException.ThrowIfNull(options);
        double a = options.ParetoShape;
        double scale = options.MeanFlowBytes * (a - 1) / a;
        double u = 1 - random.NextDouble(); // (0, 1]
        return (long)Math.Min(options.MaxFlowBytes, Math.Round(scale / Math.Pow(u, 1 / a)));
    }

    /// <summary>
    /// <paramref name="count"/> servers that send nothing yet, as close to each other as the order of the servers
    /// (racks are runs of consecutive servers) allows: the next free ones from a random start, as a locality-aware
    /// scheduler places a request's workers. Marks them busy.
    /// </summary>
    private static int[] Nearby(DeterministicRandom random, bool[] busy, int count)
    {
        int n = busy.Length;
        var placed = new int[count];
        int s = random.Next(n);
        for (int k = 0; k < count; s = (s + 1) % n)
        {
            if (!busy[s])
            {
                busy[s] = true;
                placed[k++] = s;
            }
        }
        return placed;
    }

    private static int OtherServer(DeterministicRandom random, int n, IReadOnlyList<int> except)
    {
        while (true)
        {
            int s = random.Next(n);
            if (!except.Contains(s))
            {
                return s;
            }
        }
    }
}

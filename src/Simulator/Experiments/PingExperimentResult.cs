using System.Globalization;
using System.Text;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>One ping: its target, the torus distance to it, the hops each way (from TTLs), and the round-trip time (ns; -1 when lost).</summary>
public readonly record struct PingSample(Coordinate Target, int Distance, int ForwardHops, int ReturnHops, long RoundTripNs)
{
    public bool Replied => RoundTripNs >= 0;
}

/// <summary>Round-trip times of the pings to the servers at one torus distance.</summary>
public sealed record PingDistanceRow(int Hops, int Replies, double MeanRttMs, double MinRttMs, double MaxRttMs)
{
    /// <summary>Mean RTT divided by the one-way hop count: the paper's "RTT per hop" (0.13 ms on its testbed).</summary>
    public double RttPerHopMs => Hops == 0 ? 0 : MeanRttMs / Hops;
}

/// <summary>What <see cref="PingExperiment"/> found. <see cref="ToString"/> renders it as a table.</summary>
public sealed record PingExperimentResult(
    Torus Torus,
    Coordinate Source,
    IReadOnlyList<PingSample> Samples,
    IReadOnlyList<PingDistanceRow> ByDistance,
    long SimulatedNs,
    TimeSpan WallTime,
    long Events)
{
    public int Sent => Samples.Count;

    public int Replied => Samples.Count(s => s.Replied);

    public int Lost => Sent - Replied;

    /// <summary>Replies whose forward or return hop count differs from the torus distance (a healthy cube should have none).</summary>
    public int HopMismatches => Samples.Count(s => s.Replied && (s.ForwardHops != s.Distance || s.ReturnHops != s.Distance));

    /// <summary>Mean over replies of RTT / hops.</summary>
    public double MeanRttPerHopMs
    {
        get
        {
            var perHop = Samples.Where(s => s.Replied && s.Distance > 0).Select(s => s.RoundTripNs / 1e6 / s.Distance).ToList();
            return perHop.Count == 0 ? 0 : perHop.Average();
        }
    }

    /// <summary>Least-squares fit RTT = intercept + slope x hops over every reply: the marginal cost of a hop and the fixed cost.</summary>
    public (double SlopeMsPerHop, double InterceptMs) Fit
    {
        get
        {
            var replies = Samples.Where(s => s.Replied).ToList();
            if (replies.Count < 2)
            {
                return (0, 0);
            }
            double mx = replies.Average(s => (double)s.Distance);
            double my = replies.Average(s => s.RoundTripNs / 1e6);
            double sxx = replies.Sum(s => (s.Distance - mx) * (s.Distance - mx));
            double sxy = replies.Sum(s => (s.Distance - mx) * ((s.RoundTripNs / 1e6) - my));
            double slope = sxx == 0 ? 0 : sxy / sxx;
            return (slope, my - (slope * mx));
        }
    }

    public override string ToString()
    {
        var ci = CultureInfo.InvariantCulture;
        var sb = new StringBuilder();
        sb.AppendLine(ci, $"ping from {Source} on a {Torus} torus: {Sent} pings, {Replied} replies, {Lost} lost, {HopMismatches} with hop count != torus distance");
        sb.AppendLine("hops  replies  mean RTT (ms)  min (ms)  max (ms)  RTT/hop (ms)");
        foreach (var row in ByDistance)
        {
            sb.AppendLine(ci, $"{row.Hops,4}  {row.Replies,7}  {row.MeanRttMs,13:0.0000}  {row.MinRttMs,8:0.0000}  {row.MaxRttMs,8:0.0000}  {row.RttPerHopMs,12:0.0000}");
        }
        var (slope, intercept) = Fit;
        // A fitted intercept within rounding of zero prints as 0.0000, not -0.0000.
        intercept = Math.Round(intercept, 4) == 0 ? 0 : intercept;
        sb.AppendLine(ci, $"RTT per hop: mean {MeanRttPerHopMs:0.0000} ms; fit RTT = {intercept:0.0000} ms + {slope:0.0000} ms x hops (paper testbed: 0.13 ms per hop)");
        sb.Append(ci, $"simulated {SimulatedNs / 1e6:0.###} ms in {WallTime.TotalSeconds:0.###} s wall, {Events} events");
        return sb.ToString();
    }
}

using Camdoop.Runtime.Node;

namespace Camdoop.Simulator.Network;

/// <summary>
/// The rates at which a simulated server does the work its services declare (<see cref="INodeContext.Compute"/>),
/// in bits of input per second. Merge and reduce occupy the server's event loop, one core: while it works, the
/// server's next events wait and the frames it sends leave when the work ends. Map runs on <see cref="MapCores"/>
/// cores at <see cref="MapBitsPerSecond"/> each.
/// </summary>
public sealed record ComputeRates
{
    public required double MapBitsPerSecond { get; init; }

    public required double MergeBitsPerSecond { get; init; }

    public required double ReduceBitsPerSecond { get; init; }

    public int MapCores { get; init; } = 1;

    /// <summary>
    /// Virtual nanoseconds a server's core spends on each frame it receives, whatever its length, before its services
    /// see it: a user-space network stack's per-packet work (the paper's CamCube runtime took every frame from a
    /// kernel driver into C#). 0, the default, prices bytes only.
    /// </summary>
    public long FrameNanoseconds { get; init; }

    public double RateOf(ComputeWork kind) => kind switch
    {
        ComputeWork.Map => MapBitsPerSecond * MapCores,
        ComputeWork.Merge => MergeBitsPerSecond,
        ComputeWork.Reduce => ReduceBitsPerSecond,
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "not a kind of work"),
    };

    /// <summary>Virtual nanoseconds that <paramref name="bytes"/> bytes of <paramref name="kind"/> take.</summary>
    public long CostNs(ComputeWork kind, long bytes) => (long)Math.Round(bytes * 8e9 / RateOf(kind));

    public void Validate()
    {
        Check(MapBitsPerSecond, nameof(MapBitsPerSecond));
        Check(MergeBitsPerSecond, nameof(MergeBitsPerSecond));
        Check(ReduceBitsPerSecond, nameof(ReduceBitsPerSecond));
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(MapCores);
        ArgumentOutOfRangeException.ThrowIfNegative(FrameNanoseconds);

        static void Check(double rate, string name)
        {
            if (!double.IsFinite(rate) || rate <= 0)
            {
                throw new ArgumentOutOfRangeException(name, rate, "a compute rate is a positive number of bits per second");
            }
        }
    }
}

using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>What <see cref="PingExperiment"/> measures: one server pinging the others of a simulated torus.</summary>
public sealed record PingExperimentOptions
{
    public required Torus Torus { get; init; }

    /// <summary>The server that sends every ping.</summary>
    public Coordinate Source { get; init; }

    /// <summary>How many targets to ping, drawn with <see cref="Seed"/>; 0 pings every other server.</summary>
    public int Targets { get; init; }

    /// <summary>Pings per target.</summary>
    public int Repeats { get; init; } = 1;

    public ulong Seed { get; init; } = 1;

    /// <summary>Overrides the simulator's per-hop forwarding latency (ns); null keeps its default.</summary>
    public long? ForwardingLatency { get; init; }

    /// <summary>Overrides the simulator's propagation delay (ns); null keeps its default.</summary>
    public long? PropagationDelay { get; init; }

    /// <summary>Overrides the link rate (bits per second); null keeps the simulator's default (1 Gbps).</summary>
    public long? LinkRateBitsPerSecond { get; init; }

    /// <summary>A ping with no reply after this long (ns) counts as lost.</summary>
    public long Timeout { get; init; } = 100_000_000;

    public void Validate()
    {
        ArgumentNullException.ThrowIfNull(Torus);
        if (!Torus.Contains(Source))
        {
            throw new ArgumentException($"source {Source} is not a server of the {Torus} torus");
        }
        if (Targets < 0 || Targets > Torus.Count - 1)
        {
            throw new ArgumentException($"targets must be between 0 (all) and {Torus.Count - 1}");
        }
        if (Repeats < 1)
        {
            throw new ArgumentException("repeats must be at least 1");
        }
        if (Timeout <= 0)
        {
            throw new ArgumentException("the timeout must be positive");
        }
    }
}

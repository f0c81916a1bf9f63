using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Monitoring.Control;

/// <summary>What a rate limit caps: one service's frames, or one MapReduce job's data frames.</summary>
public enum RateLimitTarget : byte
{
    Service = 1,
    Job = 2,
}

/// <summary>
/// A rate limit as an operator sets it: on a service (by id) or a job, <see cref="BytesPerSecond"/> on each port of
/// <see cref="PortMask"/> (bit n: port n) of each server in <see cref="Servers"/> (empty: every server). A rate of 0
/// lifts the limit there. Service limits are enforced by the node's round robin; job limits where the Camdoop service
/// picks the job's next frame.
/// </summary>
public sealed record RateLimit(RateLimitTarget Target, byte ServiceId, ulong JobId, long BytesPerSecond, int PortMask, IReadOnlyList<Coordinate> Servers)
{
    public const int AllPorts = (1 << Ports.Count) - 1;

    public static RateLimit ForService(byte serviceId, long bytesPerSecond, int portMask = AllPorts, IReadOnlyList<Coordinate>? servers = null) =>
        new(RateLimitTarget.Service, serviceId, 0, bytesPerSecond, portMask, servers ?? []);

    public static RateLimit ForJob(ulong jobId, long bytesPerSecond, int portMask = AllPorts, IReadOnlyList<Coordinate>? servers = null) =>
        new(RateLimitTarget.Job, 0, jobId, bytesPerSecond, portMask, servers ?? []);

    /// <summary>Whether <paramref name="server"/> is one of the servers the limit is for.</summary>
    public bool Covers(Coordinate server) => Servers.Count == 0 || Servers.Contains(server);

    /// <summary>The ports of <see cref="PortMask"/>.</summary>
    public IReadOnlyList<Port> PortsCovered
    {
        get
        {
            var ports = new List<Port>(Ports.Count);
            foreach (var port in Ports.All)
            {
                if ((PortMask & (1 << (int)port)) != 0)
                {
                    ports.Add(port);
                }
            }
            return ports;
        }
    }

    /// <summary>Throws when a field is out of range (a rate above <see cref="TokenBucket.MaxBytesPerSecond"/>, no port).</summary>
    public void Check()
    {
        if (!Enum.IsDefined(Target))
        {
            throw new ArgumentException($"unknown rate-limit target {(byte)Target}");
        }
        ArgumentOutOfRangeException.ThrowIfNegative(BytesPerSecond);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(BytesPerSecond, TokenBucket.MaxBytesPerSecond);
        if (PortMask is <= 0 or > AllPorts)
        {
            throw new ArgumentException($"port mask {PortMask} names no port or an unknown one");
        }
    }
}

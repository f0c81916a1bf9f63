using Camdoop.Monitoring.Jobs;
using Camdoop.Runtime.Node;

namespace Camdoop.Monitoring.Control;

/// <summary>Applies a rate limit on one server: to the node's round robin (service) or to its jobs (<see cref="IJobSource"/>).</summary>
public static class RateLimits
{
    /// <summary>
    /// Applies <paramref name="limit"/> here if it covers this server; false when it does not or names nothing here
    /// (a job limit where <paramref name="jobs"/> is null: a server without MapReduce jobs).
    /// </summary>
    public static bool Apply(INodeContext context, IJobSource? jobs, RateLimit limit)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(limit);
        if (!limit.Covers(context.Self))
        {
            return false;
        }
        switch (limit.Target)
        {
            case RateLimitTarget.Service:
                // Front-ends refuse these; a limit that names one anyway (from an older or a hostile sender) is not applied.
                if (!context.Services.Any(s => s.Id == limit.ServiceId) || (ProtectedServices.Contains(limit.ServiceId) && limit.BytesPerSecond > 0))
                {
                    return false;
                }
                foreach (var port in limit.PortsCovered)
                {
                    context.SetRateLimit(limit.ServiceId, port, limit.BytesPerSecond);
                }
                return true;
            case RateLimitTarget.Job:
                if (jobs is null)
                {
                    return false;
                }
                jobs.SetLimit(limit.JobId, limit.BytesPerSecond, limit.PortMask);
                return true;
            default:
                return false;
        }
    }
}

using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Node;

namespace Camdoop.Monitoring.Control;

/// <summary>Applies a rate limit on one server: to the node's round robin (service) or the Camdoop service's scheduler (job).</summary>
public static class RateLimits
{
    /// <summary>Applies <paramref name="limit"/> here if it covers this server; false when it does not or names nothing here.</summary>
    public static bool Apply(INodeContext context, RateLimit limit)
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
                if (!context.Services.Any(s => s.Id == limit.ServiceId))
                {
                    return false;
                }
                foreach (var port in limit.PortsCovered)
                {
                    context.SetRateLimit(limit.ServiceId, port, limit.BytesPerSecond);
                }
                return true;
            case RateLimitTarget.Job:
                if (context.GetService<CamdoopService>() is not { } camdoop)
                {
                    return false;
                }
                camdoop.Transport.SetJobLimit(limit.JobId, limit.BytesPerSecond, limit.PortMask);
                return true;
            default:
                return false;
        }
    }
}

using Camdoop.Runtime.Node;

namespace Camdoop.Monitoring.Control;

/// <summary>
/// The services no rate limit may slow, because the cube is managed through them: the link monitor (a limited
/// heartbeat takes links down cube-wide), key routing, job control, and monitoring itself (which carries limits: one
/// on it could delay the limit that lifts it). They are refused rather than given a floor: their traffic is a few
/// small frames a second, so no limit on them saves anything worth the risk.
/// </summary>
public static class ProtectedServices
{
    public static bool Contains(byte serviceId) => serviceId is WellKnownServices.LinkMonitor or WellKnownServices.KeyRouting
        or WellKnownServices.JobControl or WellKnownServices.Monitoring;

    /// <summary>The one-line refusal for service <paramref name="name"/>.</summary>
    public static string Refusal(string name) =>
        $"service '{name}' cannot be rate-limited: the cube is managed through it (link-monitor, key-routing, job-control and monitor never are)";
}

using Camdoop.KeyRouting;
using Camdoop.Monitoring.Metrics;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Server;

/// <summary>
/// A server's metrics as its node host and services count them (<see cref="ServerCounters"/>): what the metrics
/// table reads on a simulated server. A real node reads its whole status instead, which adds its process's own.
/// </summary>
public sealed class ServerMetricSource(NodeHost host) : IMetricSource
{
    private readonly NodeHost _host = host ?? throw new ArgumentNullException(nameof(host));

    public void Read(List<MetricSample> samples)
    {
        MetricSamples.AddGroups(samples, ServerCounters.Read(_host));
        int up = 0;
        foreach (var port in Ports.All)
        {
            var fields = ServerCounters.Port(_host, port);
            up += (int)fields["up"];
            MetricSamples.AddPort(samples, port.Name(), fields);
        }
        MetricSamples.Add(samples, "server", "linksUp", up);
        if (_host.GetService<KeyRoutingService>() is { } routing)
        {
            MetricSamples.Add(samples, "server", "reachableServers", routing.ReachableCount);
        }
    }
}

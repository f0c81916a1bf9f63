using Camdoop.Monitoring.Metrics;

namespace Camdoop.Hosting;

/// <summary>
/// A node's status as metric samples: every counter group, every port's fields (labelled with the port) and the
/// server's links up and reachable servers. What the node's meter observes and what its metrics table returns, so
/// that dotnet-counters, a query of the metrics table and the front-end's /metrics all show the same numbers.
/// </summary>
public static class NodeStatusMetrics
{
    public static List<MetricSample> Read(NodeStatus status)
    {
        ArgumentNullException.ThrowIfNull(status);
        var samples = new List<MetricSample>(256);
        MetricSamples.AddGroups(samples, status.Counters);
        foreach (var link in status.Links)
        {
            MetricSamples.AddPort(samples, link.Port, Fields(link));
        }
        MetricSamples.Add(samples, "server", "linksUp", status.LinksUp);
        MetricSamples.Add(samples, "server", "reachableServers", status.ReachableServers);
        return samples;
    }

    /// <summary>A port's numbers under status.json's names; true and false as 1 and 0.</summary>
    public static Dictionary<string, long> Fields(LinkStatus link)
    {
        ArgumentNullException.ThrowIfNull(link);
        return new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["carrier"] = link.Carrier ? 1 : 0,
            ["up"] = link.Up ? 1 : 0,
            ["heard"] = link.Heard ? 1 : 0,
            ["framesSent"] = link.FramesSent,
            ["framesReceived"] = link.FramesReceived,
            ["bytesSent"] = link.BytesSent,
            ["bytesReceived"] = link.BytesReceived,
            ["drops"] = link.Drops,
            ["busyNs"] = link.BusyNs,
            ["kernelDrops"] = link.KernelDrops,
            ["sendErrors"] = link.SendErrors,
        };
    }
}

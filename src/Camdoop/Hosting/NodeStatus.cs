using System.Text.Json;

namespace Camdoop.Hosting;

/// <summary>
/// A snapshot of one running server for the testbed and operators: its links (carrier, liveness, whether the
/// neighbour was ever heard, traffic and kernel drops) and the counters of the runtime and every service. Written
/// as status.json in the data directory every few hundred milliseconds and returned by the front-end's "status".
/// </summary>
public sealed record NodeStatus
{
    public required string Coordinate { get; init; }

    public required string Torus { get; init; }

    public int Pid { get; init; }

    /// <summary>"running" while the node runs, "stopped" after a clean shutdown.</summary>
    public required string State { get; init; }

    public DateTime StartedUtc { get; init; }

    public DateTime UpdatedUtc { get; init; }

    /// <summary>"address:port" of this server's front-end, or null.</summary>
    public string? FrontEnd { get; init; }

    /// <summary>The live web view's URL, when the server serves one.</summary>
    public string? Web { get; init; }

    public required IReadOnlyList<LinkStatus> Links { get; init; }

    /// <summary>Links that are up: carrier and the neighbour heard within the liveness deadline.</summary>
    public int LinksUp { get; init; }

    /// <summary>Servers reachable over live links in this server's link-state view, itself included.</summary>
    public int ReachableServers { get; init; }

    /// <summary>Counter groups by owner: "node" (runtime), "process", "routing", "ping", "chunkStore", "frontEnd", ...</summary>
    public required IReadOnlyDictionary<string, IReadOnlyDictionary<string, long>> Counters { get; init; }

    public static NodeStatus? TryRead(string path)
    {
        try
        {
            return JsonSerializer.Deserialize<NodeStatus>(File.ReadAllText(path), NodeConfig.JsonOptions);
        }
        catch (Exception e) when (e is IOException or JsonException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>Writes atomically (temporary file, then rename), so readers never see half a file.</summary>
    public void Write(string path)
    {
        string temp = path + ".tmp";
        File.WriteAllText(temp, JsonSerializer.Serialize(this, NodeConfig.JsonOptions));
        File.Move(temp, path, overwrite: true);
    }
}

/// <summary>One port of a server.</summary>
public sealed record LinkStatus
{
    public required string Port { get; init; }

    public string? Interface { get; init; }

    public required string Neighbour { get; init; }

    public bool Carrier { get; init; }

    public bool Up { get; init; }

    /// <summary>Whether a valid frame from the neighbour has ever arrived on this port.</summary>
    public bool Heard { get; init; }

    /// <summary>"pcap" or "afpacket": which driver moves this port's frames; null when the port is not cabled.</summary>
    public string? Driver { get; init; }

    public string? PeerMac { get; init; }

    public long FramesSent { get; init; }

    public long FramesReceived { get; init; }

    public long BytesSent { get; init; }

    public long BytesReceived { get; init; }

    /// <summary>Frames dropped at the port: forwarded frames refused (full transit queue, expired TTL) and frames flushed when the link went down.</summary>
    public long Drops { get; init; }

    /// <summary>Nanoseconds during which frames waited for the link: the time it was the bottleneck.</summary>
    public long BusyNs { get; init; }

    /// <summary>Frames the kernel dropped because the link's receive buffer (socket buffer or capture ring) was full.</summary>
    public long KernelDrops { get; init; }

    public long SendErrors { get; init; }
}

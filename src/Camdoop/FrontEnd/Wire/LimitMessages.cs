using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// "limit": sets or lifts a rate limit on a service (by name or id) or a job, on the given ports of the given servers
/// (every one when missing). The front-end sends it down its tree, then reads the limits back with a query.
/// </summary>
[MessagePackObject]
public sealed class LimitRequest : FrontEndRequest<LimitReply>
{
    public override string Op => "limit";

    /// <summary>A service's name (camdoop, chunk-store, ...) or id; or else <see cref="JobId"/>.</summary>
    [Key("service")]
    public string? Service { get; set; }

    /// <summary>A job id (16 hex digits).</summary>
    [Key("jobId")]
    public string? JobId { get; set; }

    /// <summary>Bytes per second on each port; 0 lifts the limit.</summary>
    [Key("bytesPerSecond")]
    public long? BytesPerSecond { get; set; }

    /// <summary>Ports (+X, -X, ...); missing: all six.</summary>
    [Key("ports")]
    public List<string>? Ports { get; set; }

    /// <summary>Servers (x,y,z); missing: every server.</summary>
    [Key("servers")]
    public List<string>? Servers { get; set; }
}

[MessagePackObject]
public sealed class LimitReply : FrontEndReply
{
    /// <summary>"service" or "job".</summary>
    [Key("kind")]
    public string Kind { get; set; } = "";

    /// <summary>The service's name, or the job id.</summary>
    [Key("target")]
    public string Target { get; set; } = "";

    [Key("bytesPerSecond")]
    public long BytesPerSecond { get; set; }

    [Key("ports")]
    public List<string> Ports { get; set; } = [];

    /// <summary>Servers the limit was for.</summary>
    [Key("servers")]
    public long Servers { get; set; }

    /// <summary>
    /// What the cube reported back right after: for a service, the (server, port) queues showing the limit out of
    /// servers x ports; for a job, the servers running it that show the limit.
    /// </summary>
    [Key("confirmed")]
    public long Confirmed { get; set; }

    /// <summary>For a service, servers x ports; for a job, the servers running it that answered.</summary>
    [Key("expected")]
    public long Expected { get; set; }
}

/// <summary>"limits": the rate limits in force, read from every server's services and jobs tables.</summary>
[MessagePackObject]
public sealed class LimitsRequest : FrontEndRequest<LimitsReply>
{
    public override string Op => "limits";
}

[MessagePackObject]
public sealed class LimitsReply : FrontEndReply
{
    [Key("limits")]
    public List<LimitEntry> Limits { get; set; } = [];

    /// <summary>Servers that answered, of the cube's.</summary>
    [Key("servers")]
    public long Servers { get; set; }

    [Key("serversInCube")]
    public long ServersInCube { get; set; }
}

/// <summary>One limit in force: a service or job, a rate, and where.</summary>
[MessagePackObject]
public sealed class LimitEntry
{
    [Key("kind")]
    public string Kind { get; set; } = "";

    [Key("target")]
    public string Target { get; set; } = "";

    [Key("bytesPerSecond")]
    public long BytesPerSecond { get; set; }

    /// <summary>Servers with this limit on at least one port.</summary>
    [Key("servers")]
    public long Servers { get; set; }

    /// <summary>(Server, port) queues with this limit; for a job, the servers (its limit is per port).</summary>
    [Key("queues")]
    public long Queues { get; set; }
}

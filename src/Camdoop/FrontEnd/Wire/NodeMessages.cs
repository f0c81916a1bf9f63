using System.Text.Json;
using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>"hello": which server and cube the front-end belongs to.</summary>
[MessagePackObject]
public sealed class HelloRequest : FrontEndRequest<HelloReply>
{
    public override string Op => "hello";
}

[MessagePackObject]
public sealed class HelloReply : FrontEndReply
{
    /// <summary>The front-end's server, "x,y,z".</summary>
    [Key("server")]
    public string Server { get; set; } = "";

    /// <summary>The torus, "XxYxZ".</summary>
    [Key("torus")]
    public string Torus { get; set; } = "";

    [Key("servers")]
    public long Servers { get; set; }

    /// <summary>Servers reachable over live links in the server's view, itself included.</summary>
    [Key("reachable")]
    public long Reachable { get; set; }
}

/// <summary>"status": the server's status document (the same JSON as its status.json).</summary>
[MessagePackObject]
public sealed class StatusRequest : FrontEndRequest<StatusReply>
{
    public override string Op => "status";
}

[MessagePackObject]
public sealed class StatusReply : FrontEndReply
{
    /// <summary>The JSON document, carried as a MessagePack map.</summary>
    [Key("status")]
    [MessagePackFormatter(typeof(JsonElementFormatter))]
    public JsonElement Status { get; set; }
}

/// <summary>"ping": echoes from the front-end's server to another over the torus, one part per echo.</summary>
[MessagePackObject]
public sealed class PingRequest : FrontEndRequest<PingReply, PingPart>
{
    public override string Op => "ping";

    /// <summary>The target server, "x,y,z".</summary>
    [Key("target")]
    public string? Target { get; set; }

    [Key("count")]
    public long? Count { get; set; }

    [Key("intervalMs")]
    public long? IntervalMs { get; set; }

    [Key("timeoutMs")]
    public long? TimeoutMs { get; set; }
}

/// <summary>One echo: its round trip and hop counts when it was answered, else why it was lost.</summary>
[MessagePackObject]
public sealed class PingPart : FrontEndReply
{
    [Key("seq")]
    public long Seq { get; set; }

    /// <summary>Torus distance to the target.</summary>
    [Key("distance")]
    public long Distance { get; set; }

    [Key("rttNs")]
    public long? RttNs { get; set; }

    [Key("forwardHops")]
    public long? ForwardHops { get; set; }

    [Key("returnHops")]
    public long? ReturnHops { get; set; }

    [Key("lost")]
    public string? Lost { get; set; }
}

[MessagePackObject]
public sealed class PingReply : FrontEndReply
{
    [Key("source")]
    public string Source { get; set; } = "";

    [Key("target")]
    public string Target { get; set; } = "";

    [Key("sent")]
    public long Sent { get; set; }

    [Key("replied")]
    public long Replied { get; set; }
}

/// <summary>A partial reply carrying bytes: a piece of a chunk or of a job's output, in order.</summary>
[MessagePackObject]
public sealed class DataPart : FrontEndReply
{
    [Key("offset")]
    public long Offset { get; set; }

    [Key("data")]
    public ReadOnlyMemory<byte> Data { get; set; }
}

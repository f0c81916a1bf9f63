using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>"query": a monitoring query asked of the whole cube from the front-end's server, one part per round.</summary>
[MessagePackObject]
public sealed class QueryRequest : FrontEndRequest<QueryReply, QueryPart>
{
    public override string Op => "query";

    /// <summary>The query, <c>select ... from TABLE ... every INTERVAL</c>.</summary>
    [Key("query")]
    public string? Query { get; set; }

    /// <summary>Rounds to run before the final reply; 0 or missing: until the client goes away.</summary>
    [Key("rounds")]
    public long? Rounds { get; set; }
}

/// <summary>One round's result: its rows as the user reads them, and how many servers answered in time.</summary>
[MessagePackObject]
public sealed class QueryPart : FrontEndReply
{
    [Key("round")]
    public long Round { get; set; }

    [Key("columns")]
    public List<string> Columns { get; set; } = [];

    [Key("rows")]
    public List<List<string>> Rows { get; set; } = [];

    [Key("servers")]
    public long Servers { get; set; }

    [Key("serversInCube")]
    public long ServersInCube { get; set; }

    /// <summary>From the round's start on the asking server to its last result there.</summary>
    [Key("latencyNs")]
    public long LatencyNs { get; set; }
}

[MessagePackObject]
public sealed class QueryReply : FrontEndReply
{
    [Key("rounds")]
    public long Rounds { get; set; }
}

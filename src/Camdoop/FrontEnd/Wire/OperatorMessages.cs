using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>"jobs": every job the cube's servers coordinate, running and finished, newest first.</summary>
[MessagePackObject]
public sealed class JobsRequest : FrontEndRequest<JobsReply>
{
    public override string Op => "jobs";
}

[MessagePackObject]
public sealed class JobsReply : FrontEndReply
{
    [Key("jobs")]
    public IReadOnlyList<JobSummary> Jobs { get; set; } = [];

    /// <summary>Servers that did not answer in time (x,y,z): jobs they coordinate are missing.</summary>
    [Key("unanswered")]
    public IReadOnlyList<string> Unanswered { get; set; } = [];
}

/// <summary>One job in a "jobs" reply; `camdoop jobs --json` prints these fields under these names.</summary>
[MessagePackObject]
public sealed class JobSummary
{
    [Key("jobId")]
    public string JobId { get; set; } = "";

    [Key("job")]
    public string Job { get; set; } = "";

    [Key("input")]
    public string Input { get; set; } = "";

    [Key("reducers")]
    public long Reducers { get; set; }

    [Key("mode")]
    public string Mode { get; set; } = "";

    /// <summary>"mapping", "shuffling", "done", "failed" or "killed".</summary>
    [Key("state")]
    public string State { get; set; } = "";

    [Key("servers")]
    public long Servers { get; set; }

    [Key("mapsDone")]
    public long MapsDone { get; set; }

    [Key("shuffleBytes")]
    public long ShuffleBytes { get; set; }

    [Key("reducesDone")]
    public long ReducesDone { get; set; }

    /// <summary>When it was submitted, Unix time in milliseconds.</summary>
    [Key("submittedUnixMs")]
    public long SubmittedUnixMs { get; set; }

    /// <summary>From submission to its end, or to now while it runs.</summary>
    [Key("jobSeconds")]
    public double JobSeconds { get; set; }

    [Key("shuffleReduceSeconds")]
    public double ShuffleReduceSeconds { get; set; }

    [Key("failure")]
    public string? Failure { get; set; }

    /// <summary>The server coordinating the job.</summary>
    [Key("coordinator")]
    public string Coordinator { get; set; } = "";
}

/// <summary>"kill": cancels a running job on every server (its partial output is deleted).</summary>
[MessagePackObject]
public sealed class KillRequest : FrontEndRequest<KillReply>
{
    public override string Op => "kill";

    [Key("jobId")]
    public string? JobId { get; set; }
}

[MessagePackObject]
public sealed class KillReply : FrontEndReply
{
    [Key("jobId")]
    public string JobId { get; set; } = "";

    /// <summary>What the job was doing when it was killed: "mapping" or "shuffling".</summary>
    [Key("was")]
    public string Was { get; set; } = "";

    /// <summary>Servers the job ran on, each told to drop it.</summary>
    [Key("servers")]
    public long Servers { get; set; }
}

/// <summary>"rm": deletes a dataset from every replica; answered once every reachable server has deleted its files.</summary>
[MessagePackObject]
public sealed class RmRequest : FrontEndRequest<RmReply>
{
    public override string Op => "rm";

    [Key("name")]
    public string? Name { get; set; }
}

[MessagePackObject]
public sealed class RmReply : FrontEndReply
{
    [Key("name")]
    public string Name { get; set; } = "";

    /// <summary>Replicas deleted (manifest and data chunks), over every server.</summary>
    [Key("replicas")]
    public long Replicas { get; set; }

    [Key("bytes")]
    public long Bytes { get; set; }

    /// <summary>Servers that did not answer (x,y,z): replicas they hold may remain.</summary>
    [Key("unanswered")]
    public IReadOnlyList<string> Unanswered { get; set; } = [];
}

using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>"submit": runs a job on a stored dataset; answered with the job id at once.</summary>
[MessagePackObject]
public sealed class SubmitRequest : FrontEndRequest<SubmitReply>
{
    public override string Op => "submit";

    /// <summary>A built-in job (wordcount, sort, topk?k=N, ...) or path.dll#Type.</summary>
    [Key("job")]
    public string? Job { get; set; }

    /// <summary>The input dataset.</summary>
    [Key("input")]
    public string? Input { get; set; }

    /// <summary>Reduce tasks R.</summary>
    [Key("reducers")]
    public long? Reducers { get; set; }

    /// <summary>The shuffle mode by name: "camdoop", "noagg" or "tcp".</summary>
    [Key("mode")]
    public string? Mode { get; set; }

    /// <summary>Store the output as this dataset (null: on each reducer's local disk).</summary>
    [Key("output")]
    public string? Output { get; set; }

    /// <summary>"shallow" (null means this) or "paper": the six disjoint trees of the shuffle.</summary>
    [Key("trees")]
    public string? Trees { get; set; }

    /// <summary>Each reducer replicates its output as it writes it, so a failed root's task goes on from the copy.</summary>
    [Key("replicateOutput")]
    public bool ReplicateOutput { get; set; }

    /// <summary>Mode tcp: streams each reducer admits at once (null: the servers choose from their switch buffer).</summary>
    [Key("parallelFetches")]
    public long? ParallelFetches { get; set; }

    /// <summary>Mode tcp: every sender pushes at once, unadmitted.</summary>
    [Key("push")]
    public bool Push { get; set; }
}

[MessagePackObject]
public sealed class SubmitReply : FrontEndReply
{
    /// <summary>16 hex digits.</summary>
    [Key("jobId")]
    public string JobId { get; set; } = "";
}

/// <summary>"job-status": a job's state, progress, times and outputs.</summary>
[MessagePackObject]
public sealed class JobStatusRequest : FrontEndRequest<JobStatusReply>
{
    public override string Op => "job-status";

    [Key("jobId")]
    public string? JobId { get; set; }
}

/// <summary>A job as the client sees it; `camdoop status --json` prints these fields under these names.</summary>
[MessagePackObject]
public sealed class JobStatusReply : FrontEndReply
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

    /// <summary>"shallow" or "paper".</summary>
    [Key("trees")]
    public string Trees { get; set; } = "";

    /// <summary>"mapping", "shuffling", "done" or "failed".</summary>
    [Key("state")]
    public string State { get; set; } = "";

    [Key("servers")]
    public long Servers { get; set; }

    [Key("mapsDone")]
    public long MapsDone { get; set; }

    [Key("mapTasks")]
    public long MapTasks { get; set; }

    [Key("inputBytes")]
    public long InputBytes { get; set; }

    [Key("intermediateBytes")]
    public long IntermediateBytes { get; set; }

    [Key("shuffleBytes")]
    public long ShuffleBytes { get; set; }

    [Key("reducesDone")]
    public long ReducesDone { get; set; }

    [Key("jobSeconds")]
    public double JobSeconds { get; set; }

    [Key("mapSeconds")]
    public double MapSeconds { get; set; }

    [Key("shuffleReduceSeconds")]
    public double ShuffleReduceSeconds { get; set; }

    [Key("failure")]
    public string? Failure { get; set; }

    [Key("outputDataset")]
    public string? OutputDataset { get; set; }

    [Key("outputs")]
    public IReadOnlyList<JobOutputInfo> Outputs { get; set; } = [];

    /// <summary>Servers lost while the job ran, as the front-end saw them.</summary>
    [Key("failures")]
    public IReadOnlyList<JobFailureInfo> Failures { get; set; } = [];

    [Key("recovery")]
    public JobRecoveryInfo Recovery { get; set; } = new();

    /// <summary>The server coordinating the job when asked (another after its coordinator was lost).</summary>
    [Key("coordinator")]
    public string Coordinator { get; set; } = "";

    /// <summary>How many times a TCP Camdoop job started over on the servers left after one was lost (0 at first).</summary>
    [Key("attempt")]
    public long Attempt { get; set; }
}

/// <summary>A server that became unreachable during the job.</summary>
[MessagePackObject]
public sealed class JobFailureInfo
{
    [Key("server")]
    public string Server { get; set; } = "";

    /// <summary>When the job's coordinator learnt of it, in seconds after the job was submitted.</summary>
    [Key("detectedAtSeconds")]
    public double DetectedAtSeconds { get; set; }

    /// <summary>The same instant as Unix time in milliseconds, to compare with when the server was stopped.</summary>
    [Key("detectedAtUnixMs")]
    public long DetectedAtUnixMs { get; set; }

    /// <summary>"mapping", "shuffling", or "finishing" (every reduce task had written its output).</summary>
    [Key("during")]
    public string During { get; set; } = "";
}

/// <summary>What the live servers did to recover, summed over them.</summary>
[MessagePackObject]
public sealed class JobRecoveryInfo
{
    /// <summary>Shuffle bytes sent again after restarts and resumes.</summary>
    [Key("resentBytes")]
    public long ResentBytes { get; set; }

    [Key("mapTasksRerun")]
    public long MapTasksRerun { get; set; }

    /// <summary>Tree vertices and root reducers of lost servers taken over by live ones.</summary>
    [Key("verticesAdopted")]
    public long VerticesAdopted { get; set; }
}

/// <summary>One finished reduce task's output: a file on its server's disk or a chunk of the output dataset.</summary>
[MessagePackObject]
public sealed class JobOutputInfo
{
    [Key("reduceTask")]
    public long ReduceTask { get; set; }

    [Key("server")]
    public string Server { get; set; } = "";

    [Key("path")]
    public string? Path { get; set; }

    [Key("chunk")]
    public string? Chunk { get; set; }

    [Key("records")]
    public long Records { get; set; }

    [Key("bytes")]
    public long Bytes { get; set; }
}

/// <summary>"job-part": one reduce task's output in <see cref="DataPart"/>s, then its length and server.</summary>
[MessagePackObject]
public sealed class JobPartRequest : FrontEndRequest<JobPartReply, DataPart>
{
    public override string Op => "job-part";

    [Key("jobId")]
    public string? JobId { get; set; }

    [Key("reduceTask")]
    public long? ReduceTask { get; set; }
}

[MessagePackObject]
public sealed class JobPartReply : FrontEndReply
{
    [Key("length")]
    public long Length { get; set; }

    [Key("server")]
    public string Server { get; set; } = "";
}

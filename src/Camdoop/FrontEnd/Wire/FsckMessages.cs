using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>"fsck": the replicas of every dataset's chunks (or of one dataset's), set against the placement.</summary>
[MessagePackObject]
public sealed class FsckRequest : FrontEndRequest<FsckReply>
{
    public override string Op => "fsck";

    /// <summary>The dataset to check; null: every dataset.</summary>
    [Key("name")]
    public string? Name { get; set; }
}

/// <summary>
/// Totals over the datasets checked (each dataset's own under <see cref="Datasets"/>); `camdoop fsck --json` prints
/// these fields under these names. Replicas count only on servers that answered.
/// </summary>
[MessagePackObject]
public sealed class FsckReply : FrontEndReply
{
    /// <summary>Data chunks of the datasets checked.</summary>
    [Key("chunks")]
    public long Chunks { get; set; }

    /// <summary>Their replicas on the servers that answered, corrupt ones included.</summary>
    [Key("replicas")]
    public long Replicas { get; set; }

    /// <summary>Chunks with fewer good live replicas than <see cref="Required"/> (the missing ones among them).</summary>
    [Key("underReplicated")]
    public long UnderReplicated { get; set; }

    /// <summary>Chunks with no good replica on any server that answered.</summary>
    [Key("missing")]
    public long Missing { get; set; }

    /// <summary>Live replicas whose last check (scrub or read) found them bad.</summary>
    [Key("corrupt")]
    public long Corrupt { get; set; }

    /// <summary>Good replicas a chunk should have: 3, or the number of live servers when fewer.</summary>
    [Key("required")]
    public long Required { get; set; }

    /// <summary>Servers whose replicas count: those that answered, the front-end's own included.</summary>
    [Key("liveServers")]
    public long LiveServers { get; set; }

    [Key("datasets")]
    public IReadOnlyList<FsckDatasetInfo> Datasets { get; set; } = [];

    /// <summary>Servers ("x,y,z") that did not answer: their replicas are not counted.</summary>
    [Key("unanswered")]
    public IReadOnlyList<string> Unanswered { get; set; } = [];
}

[MessagePackObject]
public sealed class FsckDatasetInfo
{
    [Key("name")]
    public string Name { get; set; } = "";

    [Key("chunks")]
    public long Chunks { get; set; }

    [Key("replicas")]
    public long Replicas { get; set; }

    [Key("underReplicated")]
    public long UnderReplicated { get; set; }

    [Key("missing")]
    public long Missing { get; set; }

    [Key("corrupt")]
    public long Corrupt { get; set; }

    /// <summary>Good live replicas of the dataset's manifest.</summary>
    [Key("manifestReplicas")]
    public long ManifestReplicas { get; set; }

    /// <summary>Why the dataset's chunks are unknown (its manifest could not be read); null when they are known.</summary>
    [Key("error")]
    public string? Error { get; set; }

    /// <summary>The chunks short of good replicas or holding a corrupt one, at most <see cref="FsckLimits.MaxProblems"/>.</summary>
    [Key("problems")]
    public IReadOnlyList<FsckChunkInfo> Problems { get; set; } = [];

    /// <summary>Problem chunks in all, listed or not.</summary>
    [Key("problemCount")]
    public long ProblemCount { get; set; }
}

/// <summary>A problem chunk: where its live replicas are and where placement puts them.</summary>
[MessagePackObject]
public sealed class FsckChunkInfo
{
    /// <summary>The chunk id, 40 hex digits.</summary>
    [Key("chunk")]
    public string Chunk { get; set; } = "";

    /// <summary>The chunk's index in the dataset; -1 for the manifest.</summary>
    [Key("index")]
    public long Index { get; set; }

    /// <summary>Live replicas not known to be corrupt.</summary>
    [Key("good")]
    public long Good { get; set; }

    [Key("replicas")]
    public IReadOnlyList<FsckReplicaInfo> Replicas { get; set; } = [];

    /// <summary>The servers ("x,y,z") placement puts its replicas on now, primary first.</summary>
    [Key("placement")]
    public IReadOnlyList<string> Placement { get; set; } = [];
}

[MessagePackObject]
public sealed class FsckReplicaInfo
{
    [Key("server")]
    public string Server { get; set; } = "";

    /// <summary>
    /// "good", "corrupt", "unchecked" (not checked since the server started; presumed good) or "missing" (the server
    /// lists it, but its file is gone).
    /// </summary>
    [Key("state")]
    public string State { get; set; } = "";
}

public static class FsckLimits
{
    /// <summary>Problem chunks a reply lists per dataset at most (the counts cover them all): a reply stays small.</summary>
    public const int MaxProblems = 1000;
}

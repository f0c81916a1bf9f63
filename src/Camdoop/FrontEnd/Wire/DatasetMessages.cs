using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>"put-begin": starts storing a dataset on this connection.</summary>
[MessagePackObject]
public sealed class PutBeginRequest : FrontEndRequest<PutBeginReply>
{
    public override string Op => "put-begin";

    [Key("name")]
    public string? Name { get; set; }

    /// <summary>"text" or "records".</summary>
    [Key("format")]
    public string? Format { get; set; }

    /// <summary>Bytes per record ("records" only).</summary>
    [Key("recordSize")]
    public long? RecordSize { get; set; }

    [Key("chunks")]
    public long? Chunks { get; set; }

    [Key("totalBytes")]
    public long? TotalBytes { get; set; }
}

[MessagePackObject]
public sealed class PutBeginReply : FrontEndReply
{
    [Key("servers")]
    public long Servers { get; set; }
}

/// <summary>"put-chunk": one part of chunk <see cref="Index"/>; the final part stores the chunk on its replicas.</summary>
[MessagePackObject]
public sealed class PutChunkRequest : FrontEndRequest<PutChunkReply>
{
    public override string Op => "put-chunk";

    [Key("index")]
    public long? Index { get; set; }

    /// <summary>The whole chunk's length.</summary>
    [Key("length")]
    public long? Length { get; set; }

    /// <summary>Where this part starts in the chunk.</summary>
    [Key("offset")]
    public long? Offset { get; set; }

    [Key("data")]
    public ReadOnlyMemory<byte>? Data { get; set; }

    [Key("final")]
    public bool? Final { get; set; }

    /// <summary>The chunk's XxHash64 (final part; as a signed 64-bit integer).</summary>
    [Key("checksum")]
    public long? Checksum { get; set; }
}

/// <summary>After a part: the bytes received so far; after the final part: the chunk's id and replicas.</summary>
[MessagePackObject]
public sealed class PutChunkReply : FrontEndReply
{
    [Key("received")]
    public long? Received { get; set; }

    [Key("chunk")]
    public string? Chunk { get; set; }

    /// <summary>The servers ("x,y,z") holding a replica.</summary>
    [Key("replicas")]
    public IReadOnlyList<string>? Replicas { get; set; }
}

/// <summary>"put-end": stores the dataset's manifest once every chunk is stored.</summary>
[MessagePackObject]
public sealed class PutEndRequest : FrontEndRequest<PutEndReply>
{
    public override string Op => "put-end";
}

[MessagePackObject]
public sealed class PutEndReply : FrontEndReply
{
    [Key("name")]
    public string Name { get; set; } = "";

    [Key("chunks")]
    public long Chunks { get; set; }

    [Key("bytes")]
    public long Bytes { get; set; }
}

/// <summary>"get-manifest": a dataset's chunks.</summary>
[MessagePackObject]
public sealed class GetManifestRequest : FrontEndRequest<ManifestReply>
{
    public override string Op => "get-manifest";

    [Key("name")]
    public string? Name { get; set; }
}

[MessagePackObject]
public sealed class ManifestReply : FrontEndReply
{
    [Key("name")]
    public string Name { get; set; } = "";

    /// <summary>"text" or "records&lt;size&gt;".</summary>
    [Key("format")]
    public string Format { get; set; } = "";

    [Key("totalBytes")]
    public long TotalBytes { get; set; }

    /// <summary>Unix time in milliseconds.</summary>
    [Key("created")]
    public long Created { get; set; }

    [Key("chunks")]
    public IReadOnlyList<ManifestChunkInfo> Chunks { get; set; } = [];
}

[MessagePackObject]
public sealed class ManifestChunkInfo
{
    /// <summary>The chunk id, 40 hex digits.</summary>
    [Key("id")]
    public string Id { get; set; } = "";

    [Key("length")]
    public long Length { get; set; }

    /// <summary>XxHash64 as a signed 64-bit integer.</summary>
    [Key("checksum")]
    public long Checksum { get; set; }
}

/// <summary>"get-chunk": a chunk's bytes in <see cref="DataPart"/>s, then its length and checksum.</summary>
[MessagePackObject]
public sealed class GetChunkRequest : FrontEndRequest<GetChunkReply, DataPart>
{
    public override string Op => "get-chunk";

    /// <summary>The chunk id, 40 hex digits.</summary>
    [Key("chunk")]
    public string? Chunk { get; set; }
}

[MessagePackObject]
public sealed class GetChunkReply : FrontEndReply
{
    [Key("length")]
    public long Length { get; set; }

    [Key("checksum")]
    public long Checksum { get; set; }

    /// <summary>The server the chunk was read from.</summary>
    [Key("from")]
    public string From { get; set; } = "";

    /// <summary>Replicas rewritten while reading.</summary>
    [Key("repairs")]
    public long Repairs { get; set; }
}

/// <summary>"ls": the datasets in the chunk store.</summary>
[MessagePackObject]
public sealed class LsRequest : FrontEndRequest<LsReply>
{
    public override string Op => "ls";
}

[MessagePackObject]
public sealed class LsReply : FrontEndReply
{
    [Key("datasets")]
    public IReadOnlyList<DatasetInfo> Datasets { get; set; } = [];

    [Key("serversAsked")]
    public long ServersAsked { get; set; }

    /// <summary>Servers ("x,y,z") that did not answer: datasets stored only there may be missing.</summary>
    [Key("unanswered")]
    public IReadOnlyList<string> Unanswered { get; set; } = [];
}

[MessagePackObject]
public sealed class DatasetInfo
{
    [Key("name")]
    public string Name { get; set; } = "";

    [Key("bytes")]
    public long Bytes { get; set; }

    [Key("chunks")]
    public long Chunks { get; set; }

    /// <summary>"text" or "records&lt;size&gt;".</summary>
    [Key("format")]
    public string Format { get; set; } = "";
}

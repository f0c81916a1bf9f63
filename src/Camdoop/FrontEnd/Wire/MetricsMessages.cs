using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// "metrics": the whole cube's metrics as a Prometheus exposition (text format 0.0.4), the same text the web view
/// serves at /metrics. The text comes as <see cref="DataPart"/>s (it grows with the cube), then the reply.
/// </summary>
[MessagePackObject]
public sealed class MetricsRequest : FrontEndRequest<MetricsReply, DataPart>
{
    public override string Op => "metrics";
}

[MessagePackObject]
public sealed class MetricsReply : FrontEndReply
{
    /// <summary>Bytes of the text, all parts together.</summary>
    [Key("bytes")]
    public long Bytes { get; set; }

    /// <summary>Servers whose series are in the text.</summary>
    [Key("servers")]
    public long Servers { get; set; }

    [Key("serversInCube")]
    public long ServersInCube { get; set; }

    /// <summary>Time from the round's start to its last result at the front-end's server.</summary>
    [Key("mergeNs")]
    public long MergeNs { get; set; }
}

/// <summary>"metrics-token": a bearer token that opens this front-end's web view's /metrics (and nothing else) for some days.</summary>
[MessagePackObject]
public sealed class MetricsTokenRequest : FrontEndRequest<MetricsTokenReply>
{
    public override string Op => "metrics-token";

    /// <summary>How long the token lasts, in days.</summary>
    [Key("days")]
    public long? Days { get; set; }
}

[MessagePackObject]
public sealed class MetricsTokenReply : FrontEndReply
{
    /// <summary>The token: 64 hex digits, sent as "Authorization: Bearer TOKEN".</summary>
    [Key("token")]
    public string Token { get; set; } = "";

    /// <summary>The web view's TCP port (HTTPS), on the front-end's address.</summary>
    [Key("port")]
    public long Port { get; set; }

    /// <summary>When the token expires, Unix time in seconds.</summary>
    [Key("expiresUnixSeconds")]
    public long ExpiresUnixSeconds { get; set; }
}

/// <summary>"metrics-revoke": voids every scrape token of this front-end's web view; its browser sessions stay.</summary>
[MessagePackObject]
public sealed class MetricsRevokeRequest : FrontEndRequest<MetricsRevokeReply>
{
    public override string Op => "metrics-revoke";
}

[MessagePackObject]
public sealed class MetricsRevokeReply : FrontEndReply
{
    /// <summary>Tokens that were live and are void now.</summary>
    [Key("tokens")]
    public long Tokens { get; set; }

    [Key("port")]
    public long Port { get; set; }
}

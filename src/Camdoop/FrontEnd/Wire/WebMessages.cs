using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// "web-login": a one-time login code for this front-end's live web view, which the client turns into a link
/// (https://HOST:PORT/login?code=CODE, HOST being the address it reached the front-end at).
/// </summary>
[MessagePackObject]
public sealed class WebLoginRequest : FrontEndRequest<WebLoginReply>
{
    public override string Op => "web-login";
}

[MessagePackObject]
public sealed class WebLoginReply : FrontEndReply
{
    /// <summary>The code: 64 hex digits, good once.</summary>
    [Key("code")]
    public string Code { get; set; } = "";

    /// <summary>The web view's TCP port (HTTPS), on the front-end's address.</summary>
    [Key("port")]
    public long Port { get; set; }

    /// <summary>How long the code is good from now.</summary>
    [Key("expiresInSeconds")]
    public long ExpiresInSeconds { get; set; }

    /// <summary>How long a session opened with it lasts.</summary>
    [Key("sessionSeconds")]
    public long SessionSeconds { get; set; }
}

/// <summary>"web-revoke": ends every session of this front-end's web view and forgets its unused login codes.</summary>
[MessagePackObject]
public sealed class WebRevokeRequest : FrontEndRequest<WebRevokeReply>
{
    public override string Op => "web-revoke";
}

[MessagePackObject]
public sealed class WebRevokeReply : FrontEndReply
{
    /// <summary>Sessions that were live and are ended.</summary>
    [Key("sessions")]
    public long Sessions { get; set; }

    /// <summary>Login codes not used yet, now void.</summary>
    [Key("loginCodes")]
    public long LoginCodes { get; set; }

    /// <summary>The web view's TCP port.</summary>
    [Key("port")]
    public long Port { get; set; }
}

using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// The one message a front-end sends in clear, first on every connection it admits: "start TLS". It has a reply's
/// fields (id 0, ok) so that a front-end that cannot take the connection (busy, see <c>ReplyEnvelope.Busy</c>) sends
/// an error in its place, which a client reads before it spends a TLS handshake. Nothing else ever crosses in clear.
/// </summary>
[MessagePackObject]
public sealed class TlsGreeting : FrontEndReply
{
    /// <summary>What follows: <c>TlsGreeting.Protocol</c>.</summary>
    [Key("protocol")]
    public string Protocol { get; set; } = "";

    /// <summary>Mutual TLS 1.3 under the cluster CA, then length-prefixed MessagePack.</summary>
    public const string CurrentProtocol = "camdoop-frontend-tls13-1";
}

/// <summary>
/// The first message inside TLS: the front-end took the client's certificate and has a session for it (or, with
/// ok = false, why not: no certificate, another CA's, expired, revoked, or the front-end is full).
/// </summary>
[MessagePackObject]
public sealed class Welcome : FrontEndReply
{
    /// <summary>The front-end's server, as its certificate names it.</summary>
    [Key("server")]
    public string Server { get; set; } = "";

    /// <summary>The client, as its certificate names it.</summary>
    [Key("client")]
    public string Client { get; set; } = "";
}

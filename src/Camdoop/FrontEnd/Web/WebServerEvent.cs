namespace Camdoop.FrontEnd.Web;

/// <summary>What the web server counts of Kestrel's events (<see cref="WebServerLog"/>).</summary>
internal enum WebServerEvent
{
    /// <summary>A request refused unread: malformed, headers too large, too slow to arrive.</summary>
    BadRequest,

    /// <summary>A connection closed at once: the server was serving its maximum of connections.</summary>
    ConnectionRefused,

    /// <summary>
    /// A TLS handshake that failed or timed out on this side: plain HTTP, a connection dropped half way. (A client
    /// refusing the certificate under TLS 1.3 does so after this side is done: it shows as a connection closed.)
    /// </summary>
    HandshakeFailed,
}

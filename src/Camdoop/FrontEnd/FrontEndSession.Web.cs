using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

// "web-login" and "web-revoke": a client authenticated here asks for a one-time login code for this server's web
// view, or ends every session of it (docs/security.md, the web view).
public sealed partial class FrontEndSession
{
    private Task HandleWebAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation) => request switch
    {
        WebLoginRequest => WebLoginAsync(replies, cancellation),
        WebRevokeRequest => WebRevokeAsync(replies, cancellation),
        _ => HandleMetricsAsync(request, replies, cancellation),
    };

    private async Task WebLoginAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var (web, port) = ServedWebView();
        await replies.SendAsync(
            new WebLoginReply
            {
                Code = web.IssueLoginCode(),
                Port = port,
                ExpiresInSeconds = (long)web.CodeLifetime.TotalSeconds,
                SessionSeconds = (long)web.SessionLifetime.TotalSeconds,
            },
            cancellation).ConfigureAwait(false);
    }

    private async Task WebRevokeAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var (web, port) = ServedWebView();
        var revoked = web.RevokeAll();
        await replies.SendAsync(new WebRevokeReply { Sessions = revoked.Sessions, LoginCodes = revoked.LoginCodes, Port = port }, cancellation).ConfigureAwait(false);
    }

    private (IWebLogins View, int Port) ServedWebView() => _web?.Port is { } port
        ? (_web, port)
        : throw new FrontEndException($"server {_node.Loop.Host.Self} serves no web view ('webPort' in its node config)");
}

using System.Text;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

// "metrics": the whole cube's Prometheus exposition, gathered from this server (docs/monitoring.md, metrics);
// "metrics-token" and "metrics-revoke": a bearer token for this server's web view's /metrics, or the end of every one.
public sealed partial class FrontEndSession
{
    /// <summary>A scrape token lasts this long unless the client asks otherwise.</summary>
    public const int DefaultScrapeTokenDays = 90;

    private Task HandleMetricsAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation) => request switch
    {
        MetricsRequest => MetricsAsync(replies, cancellation),
        MetricsTokenRequest token => MetricsTokenAsync(token, replies, cancellation),
        MetricsRevokeRequest => MetricsRevokeAsync(replies, cancellation),
        _ => throw new FrontEndException($"unknown operation '{request.Op}'"),
    };

    private async Task MetricsAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var metrics = _node.Metrics ?? throw new FrontEndException($"server {_node.Loop.Host.Self} does not run the monitoring service");
        var exposition = await metrics.ScrapeAsync().ConfigureAwait(false);
        byte[] text = Encoding.UTF8.GetBytes(exposition.Text);
        await SendDataPartsAsync(text, replies, cancellation).ConfigureAwait(false);
        await replies.SendAsync(
            new MetricsReply { Bytes = text.Length, Servers = exposition.Servers, ServersInCube = exposition.ServersInCube, MergeNs = exposition.MergeNs },
            cancellation).ConfigureAwait(false);
    }

    private async Task MetricsTokenAsync(MetricsTokenRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        int days = request.Days is null ? DefaultScrapeTokenDays : Field.InRange(request.Days, "days", 1, 366);
        var (web, port) = ServedWebView();
        var (token, expires) = web.IssueScrapeToken(TimeSpan.FromDays(days));
        await replies.SendAsync(new MetricsTokenReply { Token = token, Port = port, ExpiresUnixSeconds = expires.ToUnixTimeSeconds() }, cancellation).ConfigureAwait(false);
    }

    private async Task MetricsRevokeAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var (web, port) = ServedWebView();
        int revoked = web.RevokeScrapeTokens();
        await replies.SendAsync(new MetricsRevokeReply { Tokens = revoked, Port = port }, cancellation).ConfigureAwait(false);
    }
}

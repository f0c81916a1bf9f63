using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.MapReduce.FrontEnd;

/// <summary>
/// One client connection to a server's front-end: dispatches each request by its "op". Requests of one connection
/// are served one at a time, so an upload in progress is plain per-session state. Every service call goes through
/// <see cref="FrontEndNode"/>, i.e. through the server's event loop.
/// </summary>
public sealed partial class FrontEndSession : IFrontEndSession
{
    private readonly FrontEndNode _node;

    public FrontEndSession(FrontEndNode node)
    {
        ArgumentNullException.ThrowIfNull(node);
        _node = node;
    }

    public Task HandleAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(replies);
        return request.Op switch
        {
            "hello" => HelloAsync(replies, cancellation),
            "status" => StatusAsync(replies, cancellation),
            "ping" => PingAsync(request, replies, cancellation),
            null => throw new FrontEndException("the request has no 'op' field"),
            _ => HandleMoreAsync(request, replies, cancellation),
        };
    }

    public void Dispose() => DisposeUploads();

    private async Task HelloAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var (torus, reachable) = await _node.OnLoop(() => (_node.Loop.Host.Torus, _node.Routing.ReachableCount)).ConfigureAwait(false);
        await replies.SendAsync(
            new WireMessage
            {
                { "server", _node.Loop.Host.Self.ToString() },
                { "torus", torus.ToString() },
                { "servers", (long)torus.Count },
                { "reachable", (long)reachable },
            },
            cancellation).ConfigureAwait(false);
    }

    private async Task StatusAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var status = await _node.Status().ConfigureAwait(false);
        await replies.SendAsync(new WireMessage { { "status", WireJson.FromJson(status) } }, cancellation).ConfigureAwait(false);
    }
}

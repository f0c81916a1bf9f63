using System.Net;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

/// <summary>
/// One client connection to a server's front-end: dispatches each request by its type (its "op"). Requests of one connection
/// are served one at a time, so an upload in progress is plain per-session state. Every service call goes through
/// <see cref="FrontEndNode"/>, i.e. through the server's event loop.
/// </summary>
public sealed partial class FrontEndSession : IFrontEndSession
{
    private readonly FrontEndNode _node;
    private readonly long _maxHeldBytes;
    private readonly FrontEndMemoryBudget _budget;
    private readonly StandingQueryLimit _queries;
    private IPAddress? _client;
    private readonly IWebLogins? _web;

    /// <param name="node">The server's services, reached through its event loop.</param>
    /// <param name="maxHeldBytes">
    /// The most this session holds for its client (the chunk of an upload): the server's
    /// <see cref="FrontEndServerOptions.MaxBytesInFlight"/>, so that an upload that could not fit is refused up front.
    /// </param>
    /// <param name="budget">
    /// What the whole front-end holds for its clients, shared by its sessions: uploads' chunk buffers and chunks read
    /// for downloads are taken from it; none: no limit but <paramref name="maxHeldBytes"/>.
    /// </param>
    /// <param name="queries">The front-end's places for monitoring queries, shared by its sessions; none: no limit.</param>
    /// <param name="web">The live web view this server serves, whose login codes clients ask for; null when it serves none.</param>
    public FrontEndSession(FrontEndNode node, long maxHeldBytes = long.MaxValue, FrontEndMemoryBudget? budget = null, StandingQueryLimit? queries = null, IWebLogins? web = null)
    {
        ArgumentNullException.ThrowIfNull(node);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxHeldBytes);
        _node = node;
        _maxHeldBytes = maxHeldBytes;
        _budget = budget ?? FrontEndMemoryBudget.Unlimited();
        _queries = queries ?? StandingQueryLimit.Unlimited();
        _web = web;
    }

    public long HeldBytes => _upload?.Current?.Capacity ?? 0;

    public void Open(IPAddress? client) => _client = client;

    public Task HandleAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        ArgumentNullException.ThrowIfNull(request);
        ArgumentNullException.ThrowIfNull(replies);
        return request switch
        {
            HelloRequest => HelloAsync(replies, cancellation),
            StatusRequest => StatusAsync(replies, cancellation),
            PingRequest ping => PingAsync(ping, replies, cancellation),
            QueryRequest query => QueryAsync(query, replies, cancellation),
            _ => HandleMoreAsync(request, replies, cancellation),
        };
    }

    public void Dispose() => DisposeUploads();

    private async Task HelloAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var (torus, reachable) = await _node.OnLoop(() => (_node.Loop.Host.Torus, _node.Routing.ReachableCount)).ConfigureAwait(false);
        await replies.SendAsync(
            new HelloReply
            {
                Server = _node.Loop.Host.Self.ToString(),
                Torus = torus.ToString(),
                Servers = torus.Count,
                Reachable = reachable,
            },
            cancellation).ConfigureAwait(false);
    }

    /// <summary>Sends <paramref name="bytes"/> as <see cref="DataPart"/>s of at most <see cref="MessageFraming.MaxDataPartBytes"/> each, in order.</summary>
    private static async Task SendDataPartsAsync(byte[] bytes, FrontEndReplies replies, CancellationToken cancellation)
    {
        for (int offset = 0; offset < bytes.Length; offset += MessageFraming.MaxDataPartBytes)
        {
            int n = Math.Min(MessageFraming.MaxDataPartBytes, bytes.Length - offset);
            await replies.SendPartAsync(new DataPart { Offset = offset, Data = bytes.AsMemory(offset, n) }, cancellation).ConfigureAwait(false);
        }
    }

    private async Task StatusAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var status = await _node.Status().ConfigureAwait(false);
        await replies.SendAsync(new StatusReply { Status = status }, cancellation).ConfigureAwait(false);
    }
}

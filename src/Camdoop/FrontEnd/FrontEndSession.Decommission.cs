using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

// decommission / recommission: every server is told (ChunkStoreService.SetDecommissioned), then the named servers'
// replicas are looked for elsewhere (DrainStatusOf), so the client can say when they are safe to switch off.
public sealed partial class FrontEndSession
{
    private async Task DecommissionAsync(DecommissionRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var torus = _node.Loop.Host.Torus;
        var servers = ServersOf(request.Servers, torus);
        if (servers.Count == 0)
        {
            throw new FrontEndException("name the servers (x,y,z)");
        }
        var reply = new DecommissionReply();
        if (!request.StatusOnly)
        {
            var set = await _node.Start<DecommissionResult>(done => _node.Store.SetDecommissioned(servers, !request.Recommission, done)).ConfigureAwait(false);
            reply.Unanswered = [.. set.Unanswered.Select(c => c.Name)];
        }
        reply.Decommissioned = await _node.OnLoop(() => _node.Store.Decommissioned.Select(c => c.Name).ToList()).ConfigureAwait(false);
        if (!request.Recommission)
        {
            var drain = await _node.Start<DrainStatus>(done => _node.Store.DrainStatusOf(servers, done)).ConfigureAwait(false);
            reply.ReplicasHeld = drain.ReplicasHeld;
            reply.NotYetElsewhere = drain.NotYetElsewhere;
            reply.DrainUnanswered = [.. drain.Unanswered.Select(c => c.Name)];
            reply.Safe = drain.Safe;
        }
        await replies.SendAsync(reply, cancellation).ConfigureAwait(false);
    }
}

using Camdoop.FrontEnd.Wire;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.FrontEnd;

// "ping": echoes from this server to another over the torus, timed on this server's clock (the Camdoop paper, §3).
public sealed partial class FrontEndSession
{
    private const int MaxPings = 10_000;

    private async Task PingAsync(PingRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string text = Field.Required(request.Target, "target");
        int count = Field.InRange(request.Count, "count", 1, MaxPings);
        long intervalMs = Math.Clamp(request.IntervalMs ?? 100, 0, 10_000);
        long timeoutMs = Math.Clamp(request.TimeoutMs ?? 1000, 1, 60_000);
        var torus = _node.Loop.Host.Torus;
        if (!Coordinate.TryParse(text, out var target) || !torus.Contains(target))
        {
            throw new FrontEndException($"'{text}' is not a server of the {torus} torus (give X,Y,Z)");
        }
        long distance = torus.Distance(_node.Loop.Host.Self, target);
        int replied = 0;
        for (int i = 0; i < count; i++)
        {
            cancellation.ThrowIfCancellationRequested();
            var result = await _node.Start<PingResult?>(done =>
            {
                var status = _node.Ping.Ping(target, r => done(r), timeoutMs * NodeOptions.Millisecond);
                if (status != SendStatus.Queued)
                {
                    done(null);
                }
            }).ConfigureAwait(false);
            var part = new PingPart { Seq = i, Distance = distance };
            if (result is { Outcome: PingOutcome.Replied } r)
            {
                replied++;
                part.RttNs = r.RoundTripNs;
                part.ForwardHops = r.ForwardHops;
                part.ReturnHops = r.ReturnHops;
            }
            else
            {
                part.Lost = result is null ? "not sent: no route or queue full" : "timed out";
            }
            await replies.SendPartAsync(part, cancellation).ConfigureAwait(false);
            if (i + 1 < count && intervalMs > 0)
            {
                await Task.Delay(TimeSpan.FromMilliseconds(intervalMs), cancellation).ConfigureAwait(false);
            }
        }
        await replies.SendAsync(
            new PingReply { Source = _node.Loop.Host.Self.ToString(), Target = target.ToString(), Sent = count, Replied = replied },
            cancellation).ConfigureAwait(false);
    }
}

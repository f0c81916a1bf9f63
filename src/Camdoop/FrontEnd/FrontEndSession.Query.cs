using System.Threading.Channels;
using Camdoop.FrontEnd.Wire;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;

namespace Camdoop.FrontEnd;

// "query": a monitoring query over the whole cube, asked from this server; each round's result streams back as a part.
// The front-end runs a bounded number at once, a few per client address (StandingQueryLimit), each until its last
// round or until its client goes.
public sealed partial class FrontEndSession
{
    private const int MaxQueryRounds = 1_000_000;

    /// <summary>
    /// Longest a query's client goes without a message: rounds may be an hour apart, and a client that left is
    /// noticed only by a write that fails, so between rounds the front-end writes an empty part this often.
    /// </summary>
    internal static readonly TimeSpan QueryKeepAlive = TimeSpan.FromSeconds(5);

    private async Task QueryAsync(QueryRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string text = Field.Required(request.Query, "query");
        int rounds = request.Rounds is null ? 0 : Field.InRange(request.Rounds, "rounds", 0, MaxQueryRounds);
        var monitor = _node.Monitor ?? throw new FrontEndException($"server {_node.Loop.Host.Self} does not run the monitoring service");
        Query query;
        try
        {
            query = QueryParser.Parse(text);
        }
        catch (QueryException e)
        {
            throw new FrontEndException(e.Message, e);
        }
        if (_queries.TryStart(_client) is { } refusal)
        {
            throw new FrontEndException(refusal);
        }
        long sent;
        try
        {
            sent = await RunQueryAsync(monitor, query, rounds, replies, cancellation).ConfigureAwait(false);
        }
        finally
        {
            _queries.End(_client);
        }
        await replies.SendAsync(new QueryReply { Rounds = sent }, cancellation).ConfigureAwait(false);
    }

    /// <summary>
    /// Asks the query and streams its rounds until the last (with a round limit) or until the client goes: a reply
    /// that cannot be written (the client closed the connection, or took nothing within the write timeout) ends the
    /// loop with an exception, and the query is cancelled at the monitoring service however the loop ends.
    /// </summary>
    private async Task<long> RunQueryAsync(MonitorService monitor, Query query, int rounds, FrontEndReplies replies, CancellationToken cancellation)
    {
        // A slow client must not hold rounds without bound: the oldest unsent ones give way.
        var results = Channel.CreateBounded<QueryRound>(new BoundedChannelOptions(16) { FullMode = BoundedChannelFullMode.DropOldest });
        uint number = await _node.OnLoop(() => monitor.Ask(query, round =>
        {
            results.Writer.TryWrite(round);
            if (rounds > 0 && round.Round >= rounds)
            {
                results.Writer.TryComplete();
            }
        }, rounds)).ConfigureAwait(false);
        long sent = 0;
        try
        {
            while (await WaitForRoundAsync(results.Reader, replies, cancellation).ConfigureAwait(false))
            {
                while (results.Reader.TryRead(out var round))
                {
                    await replies.SendPartAsync(
                        new QueryPart
                        {
                            Round = round.Round,
                            Columns = [.. round.Columns],
                            Rows = [.. round.Rows.Select(r => r.Select(v => v.ToString()).ToList())],
                            Servers = round.Servers,
                            ServersInCube = round.ServersInCube,
                            LatencyNs = round.LatencyNs,
                        },
                        cancellation).ConfigureAwait(false);
                    sent++;
                }
            }
        }
        finally
        {
            try
            {
                _node.Loop.Post(() => monitor.Cancel(number));
            }
            catch (InvalidOperationException)
            {
                // The server is stopping: its queries stop with it.
            }
        }
        return sent;
    }

    /// <summary>Waits for the next round, writing a keep-alive part every <see cref="QueryKeepAlive"/>; false once the query is done.</summary>
    private static async Task<bool> WaitForRoundAsync(ChannelReader<QueryRound> reader, FrontEndReplies replies, CancellationToken cancellation)
    {
        while (true)
        {
            using var quiet = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
            quiet.CancelAfter(QueryKeepAlive);
            try
            {
                return await reader.WaitToReadAsync(quiet.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (!cancellation.IsCancellationRequested)
            {
                await replies.SendKeepAliveAsync(cancellation).ConfigureAwait(false);
            }
        }
    }
}

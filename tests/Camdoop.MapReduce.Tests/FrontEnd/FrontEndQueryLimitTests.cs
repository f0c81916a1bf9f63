using System.Net;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using static Camdoop.MapReduce.Tests.FrontEnd.OneServerFrontEnd;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// Monitoring queries asked through the front-end (real sessions, one server's monitoring service): a few per client
/// address and a bounded number in all, refused in one line beyond that, and each one cancelled at the monitoring
/// service when its client goes.
/// </summary>
public class FrontEndQueryLimitTests
{
    /// <summary>A standing query (no round limit) whose rounds come often: a client gone is noticed at the next one.</summary>
    private const string Links = "select port, up from links every 100ms";

    [Fact]
    public async Task AQueryBeyondAClientsCapIsRefusedInOneLineAndClosingTheClientEndsItsQueries()
    {
        using var fe = new OneServerFrontEnd(new FrontEndServerOptions { MaxQueries = 8, MaxQueriesPerClient = 2 });
        var standing = new List<FrontEndClient> { StartQuery(fe), StartQuery(fe) };
        Assert.Equal(2, fe.Queries.Running);
        Assert.Equal(2, await fe.MonitorQueriesAsync());

        using (var third = fe.Connect())
        {
            var e = Assert.Throws<FrontEndException>(() => third.Call(new QueryRequest { Query = Links }, (QueryPart _) => { }));
            Assert.Equal("monitoring queries per client: this client (127.0.0.1) runs 2 on this front-end, its limit; end one before starting another", e.Message);
            // The refusal ends the request, not the connection.
            Assert.Equal("(0,0,0)", third.Call(new HelloRequest()).Server);
        }
        Assert.Equal(1, fe.Queries.Refused);
        Assert.Equal(2, await fe.MonitorQueriesAsync());

        // The clients close their connections without a word: the front-end finds out when it next writes a round,
        // and cancels their queries.
        standing.ForEach(c => c.Dispose());
        await WaitForAsync(
            async () => await fe.MonitorQueriesAsync() == 0 && fe.Queries.Running == 0,
            () => $"{fe.Queries.Running} queries still counted, {fe.MonitorQueriesAsync().Result} still asked");

        // Their places are free again.
        using var again = fe.Connect();
        var reply = again.Call(new QueryRequest { Query = Links, Rounds = 1 }, (QueryPart _) => { });
        Assert.Equal(1, reply.Rounds);
        await WaitForAsync(async () => await fe.MonitorQueriesAsync() == 0 && fe.Queries.Running == 0, () => "the one-round query to end");
    }

    [Fact]
    public async Task EachClientHasItsShareAndTheFrontEndItsTotal()
    {
        using var fe = new OneServerFrontEnd(new FrontEndServerOptions { MaxQueries = 2, MaxQueriesPerClient = 1 });
        using var a = fe.ConnectFrom(IPAddress.Parse("127.0.0.2"));
        using var a2 = fe.ConnectFrom(IPAddress.Parse("127.0.0.2"));
        using var b = fe.ConnectFrom(IPAddress.Parse("127.0.0.3"));
        using var c = fe.ConnectFrom(IPAddress.Parse("127.0.0.4"));

        Assert.Null(Ask(a));
        Assert.Equal("monitoring queries per client: this client (127.0.0.2) runs 1 on this front-end, its limit; end one before starting another", Ask(a2));
        // Another client is served while the first is at its share...
        Assert.Null(Ask(b));
        // ...until the front-end runs its total.
        Assert.Equal("monitoring queries on this front-end: its clients run 2, its limit; try again later or ask another server's front-end", Ask(c));
        Assert.Equal(2, fe.Queries.Running);
        Assert.Equal(2, fe.Queries.Refused);
        Assert.Equal(2, await fe.MonitorQueriesAsync());

        a.Dispose();
        await WaitForAsync(async () => await fe.MonitorQueriesAsync() == 1 && fe.Queries.Running == 1, () => $"{fe.Queries.Running} queries still counted");
        Assert.Null(Ask(c));
        b.Dispose();
        c.Dispose();
        await WaitForAsync(async () => await fe.MonitorQueriesAsync() == 0 && fe.Queries.Running == 0, () => $"{fe.Queries.Running} queries still counted");
    }

    [Fact]
    public async Task AQueryWhoseRoundsAreAnHourApartEndsWithinSecondsOfItsClientLeaving()
    {
        using var fe = new OneServerFrontEnd();
        var client = StartQuery(fe, "select port, up from links every 60min");
        // Between rounds the front-end writes empty parts, which the client library skips...
        var keepAlive = client.ReadReply();
        Assert.True(keepAlive is { Ok: true, More: true, KeepAlive: true }, "no keep-alive between rounds");
        Assert.Equal(1, await fe.MonitorQueriesAsync());
        // ...and one of them fails once the client has gone: its query ends long before its next round.
        client.Dispose();
        await WaitForAsync(
            async () => await fe.MonitorQueriesAsync() == 0 && fe.Queries.Running == 0,
            () => $"{fe.Queries.Running} queries still counted after the client left");
    }

    /// <summary>A client whose standing query has sent its first round.</summary>
    private static FrontEndClient StartQuery(OneServerFrontEnd fe, string query = Links)
    {
        var client = fe.Connect();
        client.SendRaw(MessageFraming.Frame(new QueryRequest { Id = 1, Query = query }));
        var first = client.ReadReply();
        Assert.True(first is { Ok: true, More: true }, $"the query did not start: {first?.Error}");
        return client;
    }

    /// <summary>Asks a standing query on <paramref name="connection"/>: null once its first round came, or the refusal.</summary>
    private static string? Ask(RawConnection connection)
    {
        connection.Send(new QueryRequest { Id = 2, Query = Links });
        var reply = connection.ReadReply();
        return reply.Ok ? null : reply.Error;
    }
}

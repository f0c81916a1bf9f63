using System.Buffers.Binary;
using System.Net;
using Camdoop.MapReduce.FrontEnd;
using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.MapReduce.Tests.FrontEnd;

public class FrontEndServerTests
{
    /// <summary>Answers "echo" with the request's "text", fails "boom" with an unexpected exception, streams "count" parts.</summary>
    private sealed class TestSession : IFrontEndSession
    {
        public async Task HandleAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation)
        {
            switch (request.Op)
            {
                case "echo":
                    await replies.SendAsync(new WireMessage { { "text", request.GetString("text") } }, cancellation);
                    break;
                case "count":
                    long n = request.GetInt64("n");
                    for (long i = 0; i < n; i++)
                    {
                        await replies.SendPartAsync(new WireMessage { { "i", i } }, cancellation);
                    }
                    await replies.SendAsync(new WireMessage { { "total", n } }, cancellation);
                    break;
                case "boom":
                    throw new InvalidOperationException("a bug in a handler");
                default:
                    throw new FrontEndException($"unknown operation '{request.Op}'");
            }
        }

        public void Dispose()
        {
        }
    }

    private static FrontEndServer StartServer(FrontEndServerOptions? options = null)
    {
        var server = new FrontEndServer(new IPEndPoint(IPAddress.Loopback, 0), () => new TestSession(), options);
        server.Start();
        return server;
    }

    private static FrontEndClient Connect(FrontEndServer server) => FrontEndClient.Connect($"127.0.0.1:{server.EndPoint.Port}");

    private static byte[] Prefixed(ReadOnlySpan<byte> body)
    {
        var bytes = new byte[4 + body.Length];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)body.Length);
        body.CopyTo(bytes.AsSpan(4));
        return bytes;
    }

    [Fact]
    public void AnswersRequestsAndStreamsPartialReplies()
    {
        using var server = StartServer();
        using var client = Connect(server);
        Assert.Equal("hi", client.Call(new WireMessage("echo") { { "text", "hi" } }).GetString("text"));
        var parts = new List<long>();
        var final = client.Call(new WireMessage("count") { { "n", 5L } }, part => parts.Add(part.GetInt64("i")));
        Assert.Equal([0L, 1, 2, 3, 4], parts);
        Assert.Equal(5, final.GetInt64("total"));
    }

    [Fact]
    public void MalformedMessagesGetAnErrorReplyAndTheConnectionCarriesOn()
    {
        using var server = StartServer();
        using var client = Connect(server);
        byte[][] garbage =
        [
            [0xc1],                         // a type MessagePack never uses
            [0x93, 0x01, 0x02, 0x03],       // an array, not a map
            [0x81, 0x01, 0x02],             // a map with an integer key
            [0x82, 0xa1, 0x61, 0x01],       // a map that ends early
            [0xdf, 0xff, 0xff, 0xff, 0xff], // a map claiming 4 billion entries
            [0xd4, 0x01, 0x02],             // an extension type
            [],                             // an empty body
        ];
        foreach (var body in garbage)
        {
            client.SendRaw(Prefixed(body));
            var reply = client.ReadMessage();
            Assert.NotNull(reply);
            Assert.Equal(false, reply["ok"]);
            Assert.Contains("malformed", reply.GetString("error"), StringComparison.Ordinal);
        }
        // Same connection still works.
        Assert.Equal("still here", client.Call(new WireMessage("echo") { { "text", "still here" } }).GetString("text"));
        Assert.Equal(garbage.Length, server.MalformedMessages);
    }

    [Fact]
    public void AnOversizedMessageIsRefusedTheConnectionClosedAndTheServerStaysUp()
    {
        using var server = StartServer(new FrontEndServerOptions { MaxMessageBytes = 1024 });
        using (var client = Connect(server))
        {
            // Only the length prefix is sent: the server must refuse before waiting for (or buffering) the body.
            var prefix = new byte[4];
            BinaryPrimitives.WriteUInt32BigEndian(prefix, 200_000_000);
            client.SendRaw(prefix);
            var reply = client.ReadMessage();
            Assert.NotNull(reply);
            Assert.Equal(false, reply["ok"]);
            Assert.Contains("exceeds", reply.GetString("error"), StringComparison.Ordinal);
            Assert.Null(client.ReadMessage()); // closed by the server
        }
        using var again = Connect(server);
        Assert.Equal("ok", again.Call(new WireMessage("echo") { { "text", "ok" } }).GetString("text"));
        Assert.Equal(1, server.OversizedMessages);
    }

    [Fact]
    public void HandlerErrorsBecomeErrorRepliesWithTheirMessage()
    {
        using var server = StartServer();
        using var client = Connect(server);
        var missing = Assert.Throws<FrontEndException>(() => client.Call(new WireMessage("echo")));
        Assert.Contains("field 'text' is missing", missing.Message, StringComparison.Ordinal);
        var bug = Assert.Throws<FrontEndException>(() => client.Call(new WireMessage("boom")));
        Assert.Contains("a bug in a handler", bug.Message, StringComparison.Ordinal);
        var unknown = Assert.Throws<FrontEndException>(() => client.Call(new WireMessage("dance")));
        Assert.Contains("unknown operation 'dance'", unknown.Message, StringComparison.Ordinal);
        Assert.Equal("fine", client.Call(new WireMessage("echo") { { "text", "fine" } }).GetString("text"));
        Assert.Equal(1, server.HandlerFailures);
    }

    [Fact]
    public void ConnectionsBeyondTheLimitAreToldSoAndOthersAreServed()
    {
        using var server = StartServer(new FrontEndServerOptions { MaxConnections = 2 });
        using var a = Connect(server);
        using var b = Connect(server);
        a.Call(new WireMessage("echo") { { "text", "a" } });
        b.Call(new WireMessage("echo") { { "text", "b" } });
        using var c = Connect(server);
        var reply = c.ReadMessage();
        Assert.NotNull(reply);
        Assert.Contains("maximum of 2 connections", reply.GetString("error"), StringComparison.Ordinal);
        Assert.Equal("a again", a.Call(new WireMessage("echo") { { "text", "a again" } }).GetString("text"));
    }

    [Fact]
    public void AnUnreachableFrontEndIsOneClearError()
    {
        // Bind and release a port so that nothing listens there.
        var probe = new System.Net.Sockets.TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        int port = ((IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        var e = Assert.Throws<FrontEndException>(() => FrontEndClient.Connect($"127.0.0.1:{port}"));
        Assert.StartsWith($"front-end 127.0.0.1:{port} is unreachable", e.Message, StringComparison.Ordinal);
        Assert.Throws<FrontEndException>(() => FrontEndClient.Connect("no-port-here"));
    }
}

using System.Buffers.Binary;
using System.Net;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Tests.Shared;
using MessagePack;

namespace Camdoop.MapReduce.Tests.FrontEnd;

public class FrontEndServerTests
{
    [MessagePackObject]
    public sealed class EchoRequest : FrontEndRequest<EchoReply>
    {
        public override string Op => "echo";

        [Key("text")]
        public string? Text { get; set; }
    }

    [MessagePackObject]
    public sealed class EchoReply : FrontEndReply
    {
        [Key("text")]
        public string Text { get; set; } = "";
    }

    [MessagePackObject]
    public sealed class CountRequest : FrontEndRequest<CountReply, CountPart>
    {
        public override string Op => "count";

        [Key("n")]
        public long? N { get; set; }
    }

    [MessagePackObject]
    public sealed class CountPart : FrontEndReply
    {
        [Key("i")]
        public long I { get; set; }
    }

    [MessagePackObject]
    public sealed class CountReply : FrontEndReply
    {
        [Key("total")]
        public long Total { get; set; }
    }

    [MessagePackObject]
    public sealed class BoomRequest : FrontEndRequest<ReplyEnvelope>
    {
        public override string Op => "boom";
    }

    /// <summary>An operation the test server does not know.</summary>
    [MessagePackObject]
    public sealed class DanceRequest : FrontEndRequest<ReplyEnvelope>
    {
        public override string Op => "dance";
    }

    private static readonly FrontEndOperations TestOperations = new FrontEndOperations().Add<EchoRequest>().Add<CountRequest>().Add<BoomRequest>();

    /// <summary>Answers "echo" with the request's "text", fails "boom" with an unexpected exception, streams "count" parts.</summary>
    private sealed class TestSession : IFrontEndSession
    {
        public async Task HandleAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation)
        {
            switch (request)
            {
                case EchoRequest echo:
                    await replies.SendAsync(new EchoReply { Text = Field.Required(echo.Text, "text") }, cancellation);
                    break;
                case CountRequest count:
                    long n = Field.Required(count.N, "n");
                    for (long i = 0; i < n; i++)
                    {
                        await replies.SendPartAsync(new CountPart { I = i }, cancellation);
                    }
                    await replies.SendAsync(new CountReply { Total = n }, cancellation);
                    break;
                case BoomRequest:
                    throw new InvalidOperationException("a bug in a handler");
                default:
                    throw new FrontEndException($"unknown operation '{request.Op}'");
            }
        }

        public void Dispose()
        {
        }
    }

    /// <summary>A front-end on a loopback port serving the test operations, over TLS with the test cluster's credentials.</summary>
    internal static FrontEndServer StartServer(FrontEndServerOptions? options = null, List<string>? log = null, Camdoop.Runtime.Security.CredentialsSource? credentials = null)
    {
        var server = new FrontEndServer(
            new IPEndPoint(IPAddress.Loopback, 0),
            credentials ?? TestCredentials.Node(),
            () => new TestSession(),
            (options ?? new FrontEndServerOptions()) with { Operations = TestOperations },
            log is null ? null : line =>
            {
                lock (log)
                {
                    log.Add(line);
                }
            });
        server.Start();
        return server;
    }

    internal static FrontEndClient Connect(FrontEndServer server)
    {
        using var credentials = TestCredentials.Client;
        return FrontEndClient.Connect(Address(server), credentials);
    }

    internal static string Address(FrontEndServer server) => $"127.0.0.1:{server.EndPoint.Port}";

    [Fact]
    public void AnswersRequestsAndStreamsPartialReplies()
    {
        using var server = StartServer();
        using var client = Connect(server);
        Assert.Equal("hi", client.Call(new EchoRequest { Text = "hi" }).Text);
        var parts = new List<long>();
        var final = client.Call(new CountRequest { N = 5 }, part => parts.Add(part.I));
        Assert.Equal([0L, 1, 2, 3, 4], parts);
        Assert.Equal(5, final.Total);
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
            client.SendRaw(MessageFraming.Prefix(body));
            var reply = client.ReadReply();
            Assert.NotNull(reply);
            Assert.False(reply.Ok);
            Assert.Contains("malformed", reply.Error, StringComparison.Ordinal);
        }
        // Same connection still works.
        Assert.Equal("still here", client.Call(new EchoRequest { Text = "still here" }).Text);
        Assert.Equal(garbage.Length, server.MalformedMessages);
    }

    public static TheoryData<string, byte[], string, bool> BadRequests() => new()
    {
        { "wrong type", WireTestBytes.Map(("op", "echo"), ("id", 7L), ("text", 5L)), "field 'text' is missing or is not a string", false },
        { "unknown kind", WireTestBytes.Map(("op", "fly"), ("id", 7L)), "unknown operation 'fly'", false },
        { "no kind", WireTestBytes.Map(("id", 7L), ("text", "x")), "the request has no 'op' field", false },
        { "kind of the wrong type", WireTestBytes.Map(("op", 12L), ("id", 7L)), "field 'op' is missing or is not a string", true },
        { "truncated body", WireTestBytes.Map(("op", "echo"), ("id", 7L), ("text", "hello"))[..^3], "malformed message: a length runs past the end of the message", true },
        { "huge string length", [0x82, 0xa2, (byte)'o', (byte)'p', 0xa4, (byte)'e', (byte)'c', (byte)'h', (byte)'o', 0xa4, (byte)'t', (byte)'e', (byte)'x', (byte)'t', 0xdb, 0xff, 0xff, 0xff, 0xf0, 0x61], "a length runs past the end", true },
        { "huge binary length", WireTestBytes.MapWithRawValue("c6fffffff001"), "a length runs past the end", true },
        { "huge array length", WireTestBytes.MapWithRawValue("ddfffffff0c0"), "cannot fit the message", true },
        { "huge map length", WireTestBytes.MapWithRawValue("dffffffff0c0"), "cannot fit the message", true },
        { "deep nesting", [0x82, 0xa2, (byte)'o', (byte)'p', 0xa4, (byte)'e', (byte)'c', (byte)'h', (byte)'o', 0xa1, (byte)'z', .. Enumerable.Repeat((byte)0x91, 100_000), 0xc0], "nesting deeper than 16", true },
    };

    [Theory]
    [MemberData(nameof(BadRequests))]
    public void BadRequestsGetAClearErrorAndTheServerServesTheNextClient(string what, byte[] body, string error, bool malformed)
    {
        using var server = StartServer();
        using (var client = Connect(server))
        {
            client.SendRaw(MessageFraming.Prefix(body));
            var reply = client.ReadReply();
            Assert.NotNull(reply);
            Assert.False(reply.Ok, what);
            Assert.Contains(error, reply.Error, StringComparison.Ordinal);
            Assert.Equal(malformed ? 0 : 7, reply.Id);
            Assert.Equal("same connection", client.Call(new EchoRequest { Text = "same connection" }).Text);
        }
        using var next = Connect(server);
        Assert.Equal("next client", next.Call(new EchoRequest { Text = "next client" }).Text);
        Assert.Equal(malformed ? 1 : 0, server.MalformedMessages);
        Assert.Equal(0, server.HandlerFailures);
    }

    [Fact]
    public void AClientThatLeavesInTheMiddleOfAMessageIsCountedAndTheServerCarriesOn()
    {
        using var server = StartServer();
        var body = WireTestBytes.Map(("op", "echo"), ("text", "never finished"));
        using (var client = Connect(server))
        {
            client.SendRaw(MessageFraming.Prefix(body).AsSpan(0, 10));
        }
        using (var client = Connect(server))
        {
            client.SendRaw(MessageFraming.Prefix(body).AsSpan(0, 2)); // half a length prefix
        }
        using var next = Connect(server);
        Assert.Equal("next client", next.Call(new EchoRequest { Text = "next client" }).Text);
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (server.TruncatedMessages < 2 && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(10);
        }
        Assert.Equal(2, server.TruncatedMessages);
        Assert.Equal(0, server.MalformedMessages);
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
            var reply = client.ReadReply();
            Assert.NotNull(reply);
            Assert.False(reply.Ok);
            Assert.Contains("exceeds", reply.Error, StringComparison.Ordinal);
            Assert.Null(client.ReadReply()); // closed by the server
        }
        using var again = Connect(server);
        Assert.Equal("ok", again.Call(new EchoRequest { Text = "ok" }).Text);
        Assert.Equal(1, server.OversizedMessages);
    }

    [Fact]
    public void HandlerErrorsBecomeErrorRepliesWithTheirMessage()
    {
        using var server = StartServer();
        using var client = Connect(server);
        var missing = Assert.Throws<FrontEndException>(() => client.Call(new EchoRequest()));
        Assert.Contains("field 'text' is missing", missing.Message, StringComparison.Ordinal);
        var bug = Assert.Throws<FrontEndException>(() => client.Call(new BoomRequest()));
        Assert.Contains("a bug in a handler", bug.Message, StringComparison.Ordinal);
        var unknown = Assert.Throws<FrontEndException>(() => client.Call(new DanceRequest()));
        Assert.Contains("unknown operation 'dance'", unknown.Message, StringComparison.Ordinal);
        Assert.Equal("fine", client.Call(new EchoRequest { Text = "fine" }).Text);
        Assert.Equal(1, server.HandlerFailures);
    }

    [Fact]
    public void ConnectionsBeyondTheLimitAreToldSoAndOthersAreServed()
    {
        using var server = StartServer(new FrontEndServerOptions { MaxConnections = 2 });
        using var a = Connect(server);
        using var b = Connect(server);
        a.Call(new EchoRequest { Text = "a" });
        b.Call(new EchoRequest { Text = "b" });
        // The refusal comes in place of the challenge: the client reports it as it connects.
        var refused = Assert.Throws<FrontEndException>(() => Connect(server));
        Assert.Contains("maximum of 2 connections", refused.Message, StringComparison.Ordinal);
        Assert.Equal("a again", a.Call(new EchoRequest { Text = "a again" }).Text);
    }

    [Fact]
    public void AnUnreachableFrontEndIsOneClearError()
    {
        // Bind and release a port so that nothing listens there.
        var probe = new System.Net.Sockets.TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        int port = ((IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        var e = Assert.Throws<FrontEndException>(() => FrontEndClient.Connect($"127.0.0.1:{port}", TestCredentials.Client));
        Assert.StartsWith($"front-end 127.0.0.1:{port} is unreachable", e.Message, StringComparison.Ordinal);
        Assert.Throws<FrontEndException>(() => FrontEndClient.Connect("no-port-here", TestCredentials.Client));
    }
}

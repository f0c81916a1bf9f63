using System.Net;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using MessagePack;
using static Camdoop.MapReduce.Tests.FrontEnd.FrontEndServerTests;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// Per-connection limits over real TCP: a client that pipelines too many requests or makes the front-end hold too
/// many bytes is told why and disconnected, counted, and the other clients are served on.
/// </summary>
public class FrontEndLimitTests
{
    /// <summary>Makes the session hold "bytes" bytes for its client, as an upload's chunk does.</summary>
    [MessagePackObject]
    public sealed class HoldRequest : FrontEndRequest<ReplyEnvelope>
    {
        public override string Op => "hold";

        [Key("bytes")]
        public long? Bytes { get; set; }
    }

    private sealed class HoldingSession : IFrontEndSession
    {
        private byte[] _held = [];

        public long HeldBytes => _held.Length;

        public async Task HandleAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation)
        {
            switch (request)
            {
                case EchoRequest echo:
                    await replies.SendAsync(new EchoReply { Text = Field.Required(echo.Text, "text") }, cancellation);
                    break;
                case HoldRequest hold:
                    _held = new byte[Field.Required(hold.Bytes, "bytes")];
                    break;
                default:
                    throw new FrontEndException($"unknown operation '{request.Op}'");
            }
        }

        public void Dispose()
        {
        }
    }

    private static FrontEndServer Start(FrontEndServerOptions options)
    {
        var server = new FrontEndServer(
            new IPEndPoint(IPAddress.Loopback, 0),
            Camdoop.Tests.Shared.TestCredentials.Node(),
            () => new HoldingSession(),
            options with { Operations = new FrontEndOperations().Add<EchoRequest>().Add<HoldRequest>() });
        server.Start();
        return server;
    }

    private static byte[] Echoes(int first, int count) =>
        [.. Enumerable.Range(first, count).SelectMany(i => MessageFraming.Frame(new EchoRequest { Id = i, Text = $"echo {i}" }))];

    [Fact]
    public void PipelinedRequestsUpToTheLimitAreServedInOrderAndOneMoreClosesTheConnection()
    {
        using var server = Start(new FrontEndServerOptions { MaxRequestsInFlight = 4 });
        using (var client = Connect(server))
        {
            client.SendRaw(Echoes(100, 4));
            for (int i = 100; i < 104; i++)
            {
                var reply = client.ReadReply();
                Assert.True(reply is { Ok: true } && reply.Id == i, $"reply {i}: {reply?.Error}");
            }
            Assert.Equal(0, server.OverLimit);

            client.SendRaw(Echoes(200, 5));
            var refusal = client.ReadReply();
            Assert.NotNull(refusal);
            Assert.False(refusal.Ok);
            Assert.Equal("this connection sent more than 4 requests without waiting for their replies (the front-end's limit); the front-end closed it", refusal.Error);
            Assert.Null(client.ReadReply());
        }
        Assert.Equal(1, server.OverLimit);
        Assert.Equal(4, server.RequestsServed);
        using var next = Connect(server);
        Assert.Equal("next", next.Call(new EchoRequest { Text = "next" }).Text);
    }

    [Fact]
    public void BytesHeldBySessionAndBufferCountTogetherAgainstTheLimit()
    {
        using var server = Start(new FrontEndServerOptions { MaxBytesInFlight = 100_000 });
        using (var client = Connect(server))
        {
            client.Call(new HoldRequest { Bytes = 50_000 });
            Assert.Equal("small", client.Call(new EchoRequest { Text = "small" }).Text);
            // 60,000 bytes more, while 50,000 are held: over 100,000.
            client.SendRaw(MessageFraming.Frame(new EchoRequest { Id = 9, Text = new string('x', 60_000) }));
            var refusal = client.ReadReply();
            Assert.NotNull(refusal);
            Assert.False(refusal.Ok);
            Assert.Matches("^this connection holds [0-9]+ bytes in flight, over the front-end's limit of 100000; the front-end closed it$", refusal.Error);
            Assert.Null(client.ReadReply());
        }
        Assert.Equal(1, server.OverLimit);
        using (var client = Connect(server))
        {
            // Without anything held, the same request fits.
            Assert.Equal(60_000, client.Call(new EchoRequest { Text = new string('x', 60_000) }).Text.Length);
        }
        Assert.Equal(1, server.OverLimit);
    }
}

using System.Net;
using System.Net.Sockets;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Auth;
using Camdoop.FrontEnd.Wire;
using static Camdoop.MapReduce.Tests.FrontEnd.FrontEndServerTests;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// The front-end's handshake over real TCP on loopback: only a client holding the cluster key is served; every other
/// connection is refused with one clear error, counted by reason, and the next good client is served.
/// </summary>
public class FrontEndAuthenticationTests
{
    private static readonly ClusterKey OtherKey = ClusterKey.FromBytes(Enumerable.Repeat((byte)7, 32).ToArray(), "other key");

    [Fact]
    public void AClientWithTheKeyIsServedAndTheFrontEndProvesItHoldsItToo()
    {
        using var server = StartServer();
        using (var client = Connect(server))
        {
            Assert.Equal("in", client.Call(new EchoRequest { Text = "in" }).Text);
        }
        Assert.Equal(1, server.ConnectionsAuthenticated);
        Assert.Equal(0, server.RefusedWrongKey + server.RefusedNoHandshake + server.RefusedMalformedHandshake);
    }

    [Fact]
    public void AWrongKeyIsRefusedCountedAndTheNextGoodClientIsServed()
    {
        var log = new List<string>();
        using var server = StartServer(log: log);
        var e = Assert.Throws<FrontEndException>(() => Connect(server, OtherKey));
        Assert.Equal($"front-end {Address(server)} refused this client: authentication failed: the client's key is not this cluster's key (key: other key)", e.Message);
        Assert.Equal(1, server.RefusedWrongKey);
        using (var next = Connect(server))
        {
            Assert.Equal("next", next.Call(new EchoRequest { Text = "next" }).Text);
        }
        Assert.Equal(1, server.ConnectionsAuthenticated);
        Assert.Equal(1, server.RequestsServed);
        // The refusal is logged, and nothing of either key or proof is.
        lock (log)
        {
            Assert.Contains(log, line => line.Contains("refused", StringComparison.Ordinal) && line.Contains("not this cluster's key", StringComparison.Ordinal));
            Assert.DoesNotContain(log, line => line.Contains(Convert.ToHexString(Secret), StringComparison.OrdinalIgnoreCase) || line.Contains(Convert.ToBase64String(Secret), StringComparison.Ordinal));
        }
    }

    [Fact]
    public void ARequestInsteadOfTheHandshakeIsRefusedAndNotServed()
    {
        using var server = StartServer();
        using (var raw = FrontEndClient.ConnectWithoutKey(Address(server)))
        {
            ReadChallenge(raw);
            raw.SendRaw(MessageFraming.Frame(new EchoRequest { Id = 3, Text = "let me in" }));
            var reply = raw.ReadReply();
            Assert.NotNull(reply);
            Assert.False(reply.Ok);
            Assert.Equal(3, reply.Id);
            Assert.StartsWith("authentication required", reply.Error, StringComparison.Ordinal);
            Assert.Null(raw.ReadReply()); // closed
        }
        Assert.Equal(0, server.RequestsServed);
        Assert.Equal(1, server.RefusedNoHandshake);
        using var next = Connect(server);
        Assert.Equal("next", next.Call(new EchoRequest { Text = "next" }).Text);
    }

    [Fact]
    public void ASilentClientIsRefusedWhenTheHandshakeTimesOut()
    {
        using var server = StartServer(new FrontEndServerOptions { HandshakeTimeout = TimeSpan.FromMilliseconds(300) });
        using (var raw = FrontEndClient.ConnectWithoutKey(Address(server)))
        {
            ReadChallenge(raw);
            var reply = raw.ReadReply(); // nothing sent: the front-end gives up after the timeout
            Assert.NotNull(reply);
            Assert.False(reply.Ok);
            Assert.Equal("no authentication within 0.3 s", reply.Error);
            Assert.Null(raw.ReadReply());
        }
        Assert.Equal(1, server.RefusedNoHandshake);
        using var next = Connect(server);
        Assert.Equal("next", next.Call(new EchoRequest { Text = "next" }).Text);
    }

    [Fact]
    public void AClientThatLeavesBeforeAuthenticatingIsCountedAsNoHandshake()
    {
        using var server = StartServer();
        using (var raw = FrontEndClient.ConnectWithoutKey(Address(server)))
        {
            ReadChallenge(raw);
        }
        WaitFor(() => server.RefusedNoHandshake == 1);
        Assert.Equal(0, server.RefusedMalformedHandshake);
    }

    public static TheoryData<string, string> BadHandshakes() => new()
    {
        { "cut short", "closed in the middle of the authentication message" },
        { "not MessagePack", "authentication refused: malformed message" },
        { "oversized", "an authentication message of 4096 bytes (at most 1024)" },
        { "no proof", "field 'proof' must be 32 bytes" },
        { "short nonce", "field 'nonce' must be 32 bytes" },
        { "proof of the wrong type", "field 'proof' is missing or is not binary data" },
    };

    private static byte[] Damage(string what, byte[] good) => what switch
    {
        "cut short" => good[..(good.Length / 2)],
        "not MessagePack" => MessageFraming.Prefix([0xc1, 0xc1]),
        "oversized" => [0, 0, 0x10, 0],
        "no proof" => Frame(("op", "auth"), ("id", 1L), ("nonce", new byte[32])),
        "short nonce" => Frame(("op", "auth"), ("id", 1L), ("nonce", new byte[5]), ("proof", new byte[32])),
        _ => Frame(("op", "auth"), ("id", 1L), ("nonce", new byte[32]), ("proof", 12345L)),
    };

    [Theory]
    [MemberData(nameof(BadHandshakes))]
    public void TruncatedAndGarbledHandshakesAreRefusedCountedAndTheNextGoodClientIsServed(string what, string error)
    {
        using var server = StartServer();
        using (var raw = FrontEndClient.ConnectWithoutKey(Address(server)))
        {
            var nonce = ReadChallenge(raw);
            raw.SendRaw(Damage(what, GoodAuth(nonce)));
            raw.CloseSending();
            var reply = raw.ReadReply();
            Assert.NotNull(reply);
            Assert.False(reply.Ok, what);
            Assert.Contains(error, reply.Error, StringComparison.Ordinal);
            Assert.Null(raw.ReadReply());
        }
        Assert.Equal(1, server.RefusedMalformedHandshake);
        Assert.Equal(0, server.RefusedWrongKey + server.RefusedNoHandshake);
        using var next = Connect(server);
        Assert.Equal("next", next.Call(new EchoRequest { Text = "next" }).Text);
        Assert.Equal(0, server.HandlerFailures);
    }

    [Fact]
    public void RequestsSentRightBehindTheHandshakeAreServed()
    {
        using var server = StartServer();
        using var raw = FrontEndClient.ConnectWithoutKey(Address(server));
        var nonce = ReadChallenge(raw);
        raw.SendRaw([.. GoodAuth(nonce), .. MessageFraming.Frame(new EchoRequest { Id = 2, Text = "pipelined" })]);
        var auth = raw.ReadReply();
        Assert.True(auth is { Ok: true, Id: 1 });
        var echo = raw.ReadReply();
        Assert.True(echo is { Ok: true, Id: 2 });
        Assert.Equal(1, server.RequestsServed);
    }

    [Fact]
    public async Task AFrontEndThatCannotProveItHoldsTheKeyIsNotTrusted()
    {
        // A fake front-end that accepts any proof and answers with one it could not have computed.
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var fake = Task.Run(() =>
        {
            using var socket = listener.AcceptSocket();
            using var stream = new NetworkStream(socket);
            stream.Write(MessageFraming.Frame(new AuthChallenge { Protocol = FrontEndHandshake.Protocol, Nonce = FrontEndHandshake.NewNonce() }));
            var auth = FrontEndWire.Decode<AuthRequest>(new System.Buffers.ReadOnlySequence<byte>(MessageFraming.Read(stream)!));
            stream.Write(MessageFraming.Frame(new AuthReply { Id = auth.Id, Proof = new byte[FrontEndHandshake.ProofBytes] }));
            stream.ReadByte(); // until the client hangs up
        });
        string address = $"127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}";
        var e = Assert.Throws<FrontEndException>(() => FrontEndClient.Connect(address, Key));
        Assert.Equal($"front-end {address} could not prove it holds the cluster key (key: test key): it belongs to another cluster or has another key", e.Message);
        await fake.WaitAsync(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public void ProofsDependOnTheKeyBothNoncesAndTheSide()
    {
        var ns = FrontEndHandshake.NewNonce();
        var nc = FrontEndHandshake.NewNonce();
        var proof = FrontEndHandshake.ClientProof(Key, ns, nc);
        Assert.Equal(FrontEndHandshake.ProofBytes, proof.Length);
        Assert.True(FrontEndHandshake.Matches(proof, FrontEndHandshake.ClientProof(Key, ns, nc)));
        Assert.False(FrontEndHandshake.Matches(proof, FrontEndHandshake.ClientProof(OtherKey, ns, nc)));
        Assert.False(FrontEndHandshake.Matches(proof, FrontEndHandshake.ClientProof(Key, FrontEndHandshake.NewNonce(), nc)));
        Assert.False(FrontEndHandshake.Matches(proof, FrontEndHandshake.ClientProof(Key, ns, FrontEndHandshake.NewNonce())));
        // A client's proof cannot be reflected as the server's.
        Assert.False(FrontEndHandshake.Matches(proof, FrontEndHandshake.ServerProof(Key, ns, nc)));
        Assert.False(FrontEndHandshake.Matches(proof, proof.AsSpan(0, 31)));
        Assert.DoesNotContain(Convert.ToHexString(Secret), Key.ToString(), StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void AKeyFileIsCreatedPrivateAndLoadedBackAndABadOneIsOneLineWithoutItsContents()
    {
        string dir = Directory.CreateTempSubdirectory("camdoop-key-").FullName;
        try
        {
            string path = Path.Combine(dir, "cluster.key");
            var created = ClusterKey.Create(path);
            Assert.Equal(ClusterKey.CreatedBytes, new FileInfo(path).Length);
            if (!OperatingSystem.IsWindows())
            {
                Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(path));
            }
            var loaded = ClusterKey.Load(path);
            var ns = FrontEndHandshake.NewNonce();
            var nc = FrontEndHandshake.NewNonce();
            Assert.Equal(FrontEndHandshake.ClientProof(created, ns, nc), FrontEndHandshake.ClientProof(loaded, ns, nc));
            Assert.NotEqual(FrontEndHandshake.ClientProof(created, ns, nc), FrontEndHandshake.ClientProof(ClusterKey.Create(path), ns, nc));

            string shortKey = Path.Combine(dir, "short.key");
            File.WriteAllText(shortKey, "hunter2-secret");
            var e = Assert.Throws<FrontEndException>(() => ClusterKey.Load(shortKey));
            Assert.Contains("holds 14 bytes", e.Message, StringComparison.Ordinal);
            Assert.DoesNotContain("hunter2", e.Message, StringComparison.Ordinal);
            var missing = Assert.Throws<FrontEndException>(() => ClusterKey.Load(Path.Combine(dir, "absent.key")));
            Assert.Equal($"cluster key file {Path.Combine(dir, "absent.key")} does not exist", missing.Message);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static byte[] Secret => Enumerable.Range(1, 32).Select(i => (byte)i).ToArray();

    /// <summary>Reads the front-end's challenge; returns its nonce.</summary>
    internal static byte[] ReadChallenge(FrontEndClient raw)
    {
        var body = raw.ReadMessage();
        Assert.NotNull(body);
        var challenge = FrontEndWire.Decode<AuthChallenge>(new System.Buffers.ReadOnlySequence<byte>(body));
        Assert.True(challenge.Ok);
        Assert.Equal(FrontEndHandshake.Protocol, challenge.Protocol);
        return challenge.Nonce.ToArray();
    }

    /// <summary>A correct "auth" message (framed) for the challenge's nonce.</summary>
    internal static byte[] GoodAuth(byte[] serverNonce)
    {
        var clientNonce = FrontEndHandshake.NewNonce();
        return MessageFraming.Frame(new AuthRequest { Id = 1, Nonce = clientNonce, Proof = FrontEndHandshake.ClientProof(Key, serverNonce, clientNonce) });
    }

    private static byte[] Frame(params (string Key, object? Value)[] fields) => MessageFraming.Prefix(WireTestBytes.Map(fields));

    internal static void WaitFor(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (!condition() && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(10);
        }
        Assert.True(condition());
    }
}

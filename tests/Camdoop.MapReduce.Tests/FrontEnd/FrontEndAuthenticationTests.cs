using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Runtime.Security;
using Camdoop.Tests.Shared;
using static Camdoop.MapReduce.Tests.FrontEnd.FrontEndServerTests;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// The front-end's mutual TLS over real TCP on loopback: only a client showing a client certificate of the cluster's
/// CA is served; every other connection is refused with one clear line, counted by reason, and the next good client
/// is served. The client in turn trusts only a node certificate of its CA naming the address it dialled.
/// </summary>
public class FrontEndAuthenticationTests
{
    [Fact]
    public void AClientOfTheClusterIsServedOverTls13AndLearnsWhichServerItReached()
    {
        using var server = StartServer();
        using (var client = Connect(server))
        {
            Assert.Equal("in", client.Call(new EchoRequest { Text = "in" }).Text);
            Assert.Equal("0,0,0", client.Server);
        }
        Assert.Equal(1, server.ConnectionsAuthenticated);
        Assert.Equal(0, server.RefusedCertificate + server.RefusedNoHandshake + server.RefusedMalformedHandshake);
    }

    [Fact]
    public void AnotherCasClientIsRefusedInOneLineCountedAndTheNextGoodClientIsServed()
    {
        var log = new List<string>();
        using var server = StartServer(log: log);
        using var foreign = TestCredentials.ForeignClient;
        // The foreign client trusts its own CA only, so it refuses the front-end first, in one line...
        var e = Assert.Throws<FrontEndException>(() => FrontEndClient.Connect(Address(server), foreign));
        Assert.StartsWith($"front-end {Address(server)} is not a server of this cluster: the certificate of node '0,0,0' was not issued by this cluster's CA", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', e.Message);
        // ...and the front-end refuses it, and says why to one that listens.
        Assert.StartsWith("client certificate refused: the certificate of client 'mallory' was not issued by this cluster's CA", FirstReplyOverTls(server, foreign.Certificate).Error, StringComparison.Ordinal);
        WaitFor(() => server.RefusedCertificate == 2);
        using (var next = Connect(server))
        {
            Assert.Equal("next", next.Call(new EchoRequest { Text = "next" }).Text);
        }
        Assert.Equal(1, server.ConnectionsAuthenticated);
        Assert.Equal(1, server.RequestsServed);
        lock (log)
        {
            Assert.Contains(log, line => line.Contains("refused", StringComparison.Ordinal) && line.Contains("not issued by this cluster's CA", StringComparison.Ordinal));
        }
    }

    [Fact]
    public void NoCertificateAnExpiredOneAndANodesAreRefusedWithTheReason()
    {
        using var server = StartServer();
        using var authority = ClusterAuthority.Load(TestCredentials.AuthorityDirectory);
        string expiredDir = Directory.CreateTempSubdirectory("camdoop-expired-").FullName;
        try
        {
            using var expired = ClusterAuthority.Issue(authority, CertificateRole.Client, "old", [], TimeSpan.FromMinutes(-1), expiredDir);
            Assert.Equal("client certificate refused: no certificate was presented", FirstReplyOverTls(server, null).Error);
            Assert.StartsWith("client certificate refused: the certificate of client 'old' expired on ", FirstReplyOverTls(server, expired).Error, StringComparison.Ordinal);
            Assert.Equal("client certificate refused: node '0,0,0' may not connect here: a client certificate is required", FirstReplyOverTls(server, TestCredentials.Node().Current.Certificate).Error);
        }
        finally
        {
            Directory.Delete(expiredDir, recursive: true);
        }
        WaitFor(() => server.RefusedCertificate == 3);
        Assert.Equal(0, server.ConnectionsAuthenticated + server.RequestsServed);
    }

    [Fact]
    public void PlainRequestsInsteadOfTlsAreNeverServed()
    {
        using var server = StartServer();
        using (var raw = FrontEndClient.ConnectWithoutTls(Address(server)))
        {
            ReadGreeting(raw);
            raw.SendRaw(MessageFraming.Frame(new EchoRequest { Id = 3, Text = "let me in" }));
            // Not TLS: the handshake fails and the connection closes; nothing is answered in clear.
            Assert.Null(ReadOrNull(raw));
        }
        WaitFor(() => server.RefusedMalformedHandshake == 1);
        Assert.Equal(0, server.RequestsServed);
        using var next = Connect(server);
        Assert.Equal("next", next.Call(new EchoRequest { Text = "next" }).Text);
    }

    [Fact]
    public void ASilentClientIsDroppedWhenTheHandshakeTimesOutAndOneThatLeavesIsCounted()
    {
        using var server = StartServer(new FrontEndServerOptions { HandshakeTimeout = TimeSpan.FromMilliseconds(300) });
        using (var raw = FrontEndClient.ConnectWithoutTls(Address(server)))
        {
            ReadGreeting(raw);
            Assert.Null(ReadOrNull(raw)); // nothing sent: the front-end gives up after the timeout and closes
        }
        WaitFor(() => server.RefusedNoHandshake == 1);
        using (var raw = FrontEndClient.ConnectWithoutTls(Address(server)))
        {
            ReadGreeting(raw);
        }
        WaitFor(() => server.RefusedNoHandshake == 2);
        Assert.Equal(0, server.RefusedMalformedHandshake + server.RequestsServed);
    }

    [Fact]
    public void RandomBytesInPlaceOfTlsAreRefusedAndCountedAndTheServerCarriesOn()
    {
        const int Connections = 200;
        using var server = StartServer(new FrontEndServerOptions { HandshakeTimeout = TimeSpan.FromSeconds(5) });
        var rng = new Random(34);
        for (int i = 0; i < Connections; i++)
        {
            using var raw = FrontEndClient.ConnectWithoutTls(Address(server));
            ReadGreeting(raw);
            var junk = new byte[rng.Next(1, 600)];
            rng.NextBytes(junk);
            if (i % 2 == 0)
            {
                junk[0] = 0x16; // a TLS handshake record's type, so that the parser goes further in
                junk[1] = 0x03;
            }
            raw.SendRaw(junk);
            raw.CloseSendingPlain();
            Assert.Null(ReadOrNull(raw));
        }
        WaitFor(() => server.RefusedNoHandshake + server.RefusedMalformedHandshake == Connections);
        Assert.Equal(0, server.ConnectionsAuthenticated + server.RequestsServed + server.HandlerFailures);
        using var next = Connect(server);
        Assert.Equal("still serving", next.Call(new EchoRequest { Text = "still serving" }).Text);
    }

    [Fact]
    public async Task AServerWithoutANodeCertificateOfTheClusterForThatAddressIsNotTrusted()
    {
        // A fake front-end: it greets, then runs TLS with a certificate of another cluster's CA (a client's, even).
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        using var foreign = TestCredentials.ForeignClient;
        var fake = Task.Run(async () =>
        {
            using var socket = await listener.AcceptSocketAsync();
            await using var stream = new NetworkStream(socket);
            stream.Write(MessageFraming.Frame(new TlsGreeting { Protocol = TlsGreeting.CurrentProtocol }));
            await using var ssl = new SslStream(stream);
            await ssl.AuthenticateAsServerAsync(foreign.ServerOptions());
            _ = await ssl.ReadAsync(new byte[1]); // until the client hangs up
        });
        string address = $"127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}";
        using var client = TestCredentials.Client;
        var e = Assert.Throws<FrontEndException>(() => FrontEndClient.Connect(address, client));
        Assert.StartsWith($"front-end {address} is not a server of this cluster: the certificate of client 'mallory' was not issued by this cluster's CA", e.Message, StringComparison.Ordinal);
        await fake.WaitAsync(TimeSpan.FromSeconds(10));
    }

    [Fact]
    public void ANodeCertificateThatDoesNotNameTheAddressDialledIsNotTrusted()
    {
        // A node of the cluster whose certificate names 192.0.2.7 only, reached at 127.0.0.1.
        string dir = Directory.CreateTempSubdirectory("camdoop-elsewhere-").FullName;
        try
        {
            using (var authority = ClusterAuthority.Load(TestCredentials.AuthorityDirectory))
            {
                ClusterAuthority.Issue(authority, CertificateRole.Node, "1,0,0", [IPAddress.Parse("192.0.2.7")], ClusterAuthority.DefaultValidity, dir).Dispose();
            }
            using var server = StartServer(credentials: new CredentialsSource(dir, CertificateRole.Node));
            using var client = TestCredentials.Client;
            var e = Assert.Throws<FrontEndException>(() => FrontEndClient.Connect(Address(server), client));
            Assert.Equal($"front-end {Address(server)} is not a server of this cluster: the certificate of node '1,0,0' does not name the address 127.0.0.1 it was reached at", e.Message);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void RequestsSentRightBehindTheHandshakeAreServed()
    {
        using var server = StartServer();
        using var client = Connect(server);
        client.SendRaw([.. MessageFraming.Frame(new EchoRequest { Id = 1, Text = "a" }), .. MessageFraming.Frame(new EchoRequest { Id = 2, Text = "b" })]);
        Assert.Equal(1, client.ReadReply()!.Id);
        Assert.Equal(2, client.ReadReply()!.Id);
    }

    /// <summary>The front-end's first message inside TLS to a client showing <paramref name="certificate"/> (or none).</summary>
    private static ReplyEnvelope FirstReplyOverTls(FrontEndServer server, X509Certificate2? certificate)
    {
        using var tcp = new TcpClient();
        tcp.Connect(IPAddress.Loopback, server.EndPoint.Port);
        using var stream = tcp.GetStream();
        stream.ReadTimeout = 10_000;
        Assert.True(FrontEndWire.Decode<ReplyEnvelope>(new ReadOnlySequence<byte>(MessageFraming.Read(stream)!)).Ok);
        using var ssl = new SslStream(stream);
        ssl.AuthenticateAsClient(new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            EnabledSslProtocols = SslProtocols.Tls13,
            ClientCertificates = certificate is null ? null : [certificate],
            LocalCertificateSelectionCallback = (_, _, _, _, _) => certificate!,
            RemoteCertificateValidationCallback = (_, _, _, _) => true,
        });
        return FrontEndWire.Decode<ReplyEnvelope>(new ReadOnlySequence<byte>(MessageFraming.Read(ssl)!));
    }

    /// <summary>Reads the front-end's greeting in clear: "start TLS".</summary>
    internal static void ReadGreeting(FrontEndClient raw)
    {
        var body = raw.ReadMessage();
        Assert.NotNull(body);
        Assert.Equal(TlsGreeting.CurrentProtocol, FrontEndWire.Decode<TlsGreeting>(new ReadOnlySequence<byte>(body)).Protocol);
    }

    /// <summary>The next message as a reply, or null once the server has closed (or reset) the connection.</summary>
    internal static ReplyEnvelope? ReadOrNull(FrontEndClient raw)
    {
        try
        {
            return raw.ReadMessage() is { } body ? FrontEndWire.Decode<ReplyEnvelope>(new ReadOnlySequence<byte>(body)) : null;
        }
        catch (IOException)
        {
            return null;
        }
    }

    internal static void WaitFor(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow.AddSeconds(20);
        while (!condition() && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(10);
        }
        Assert.True(condition());
    }
}

using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Xunit.Abstractions;
using static Camdoop.MapReduce.Tests.FrontEnd.FrontEndServerTests;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// Nobody without the key can keep a client out: connections that have not authenticated wait in a pool of their own,
/// a few per address, the oldest making way when it is full. Real sockets on loopback, from many 127.x addresses.
/// </summary>
public class FrontEndAdmissionTests(ITestOutputHelper output)
{
    [Fact]
    public void EightyIdleSocketsAndThreeThousandJunkConnectionsLeaveARealClientServedInSeconds()
    {
        var log = new List<string>();
        using var server = StartServer(log: log);
        var idle = new List<Socket>();
        var whole = Stopwatch.StartNew();
        try
        {
            // 80 sockets that connect and say nothing, from ten addresses: the pool (32) is full, and each address
            // holds at most its 8 places in it.
            for (int i = 0; i < 80; i++)
            {
                idle.Add(ConnectFrom(server, IPAddress.Parse($"127.0.0.{2 + (i % 10)}")));
            }
            // They hold on, as a slow client would, past the pool's grace.
            Thread.Sleep(1500);
            // 3,000 connections that send junk and go, from 200 addresses, while the real client connects.
            // On threads of their own: blocking junk on the thread pool would starve the server's own tasks, which no
            // client on another machine could do.
            int junkSent = 0;
            var flood = Enumerable.Range(0, 4).Select(t => new Thread(() =>
            {
                for (int i = t; i < 3000; i += 4)
                {
                    try
                    {
                        using var socket = ConnectFrom(server, IPAddress.Parse($"127.0.1.{1 + (i % 200)}"));
                        socket.Send("GET / HTTP/1.1\r\n\r\n"u8);
                    }
                    catch (SocketException)
                    {
                        // Refused and closed already: junk all the same.
                    }
                    Interlocked.Increment(ref junkSent);
                }
            })).ToList();
            flood.ForEach(t => t.Start());
            SpinWait.SpinUntil(() => Volatile.Read(ref junkSent) >= 300, TimeSpan.FromSeconds(30));

            var clock = Stopwatch.StartNew();
            using (var client = Connect(server))
            {
                Assert.Equal("served", client.Call(new EchoRequest { Text = "served" }).Text);
            }
            var served = clock.Elapsed;
            flood.ForEach(t => t.Join());
            output.WriteLine($"real client served after {served.TotalMilliseconds:0} ms; the 3,000 junk connections took {clock.Elapsed.TotalSeconds:0.0} s; "
                + $"evicted {server.HandshakesEvicted}, refused: {server.RefusedPoolFull} pool full, {server.RefusedPerAddress} per address");
            Assert.Equal(3000, junkSent);
            // Well inside the handshake timeout (10 s): the client did not wait for idle sockets to be dropped.
            Assert.True(served < TimeSpan.FromSeconds(8), $"the real client was served after {served.TotalSeconds:0.0} s");
            Assert.True(server.HandshakesEvicted > 0, "the full pool never made way");
            Assert.Equal(0, server.ConnectionsRefused);
        }
        finally
        {
            foreach (var socket in idle)
            {
                socket.Dispose();
            }
        }
        // Thousands of refusals, a few log lines: at most one a second and its summary.
        server.Dispose();
        lock (log)
        {
            int seconds = (int)Math.Ceiling(whole.Elapsed.TotalSeconds);
            long refusals = server.HandshakesEvicted + server.RefusedPoolFull + server.RefusedPerAddress + server.RefusedMalformedHandshake;
            Assert.True(log.Count <= (2 * seconds) + 4, $"{log.Count} log lines in {seconds} s for {refusals} refusals:\n{string.Join('\n', log.Take(50))}");
            Assert.Contains(log, l => l.Contains("more like it in 1 s", StringComparison.Ordinal));
        }
    }

    [Fact]
    public void AnAddressGetsItsShareOfThePoolAndTheOthersAreServed()
    {
        using var server = StartServer(new FrontEndServerOptions { MaxHandshakesPerAddress = 2 });
        var hog = IPAddress.Parse("127.0.0.9");
        using var first = ConnectFrom(server, hog);
        using var second = ConnectFrom(server, hog);
        using var third = ConnectFrom(server, hog);
        // The third is refused at once, with one error message in place of the challenge.
        var reply = ReadReply(third);
        Assert.False(reply.Ok);
        Assert.True(reply.Busy);
        Assert.Contains("this address has 2 connections authenticating already", reply.Error, StringComparison.Ordinal);
        Assert.Equal(1, server.RefusedPerAddress);
        using var client = Connect(server);
        Assert.Equal("fine", client.Call(new EchoRequest { Text = "fine" }).Text);
    }

    /// <summary>
    /// A client that asks for an endless stream of replies and stops reading (a standing query's client that went
    /// quiet) is closed when a reply waits longer than the write timeout, and its request ends with it.
    /// </summary>
    [Fact]
    public void AClientThatStopsReadingIsClosedAfterTheWriteTimeout()
    {
        using var server = StartServer(new FrontEndServerOptions { WriteTimeout = TimeSpan.FromSeconds(1) });
        using var client = Connect(server);
        client.SendRaw(MessageFraming.Frame(new CountRequest { Id = 1, N = long.MaxValue }));
        var clock = Stopwatch.StartNew();
        SpinWait.SpinUntil(() => server.WriteTimeouts == 1, TimeSpan.FromSeconds(60));
        Assert.Equal(1, server.WriteTimeouts);
        output.WriteLine($"closed after {clock.Elapsed.TotalSeconds:0.0} s");
        // The others are served on.
        using var other = Connect(server);
        Assert.Equal("still here", other.Call(new EchoRequest { Text = "still here" }).Text);
    }

    [Fact]
    public void AnAuthenticatedConnectionWithoutRequestsIsClosedAfterTheIdleTimeout()
    {
        using var server = StartServer(new FrontEndServerOptions { IdleTimeout = TimeSpan.FromMilliseconds(500) });
        using var client = Connect(server);
        Assert.Equal("one", client.Call(new EchoRequest { Text = "one" }).Text);
        var closing = client.ReadReply();
        Assert.NotNull(closing);
        Assert.False(closing.Ok);
        Assert.Contains("no request for 0.5 s", closing.Error, StringComparison.Ordinal);
        Assert.Null(client.ReadReply()); // then the end of the stream
        Assert.Equal(1, server.IdleClosed);
    }

    private static Socket ConnectFrom(FrontEndServer server, IPAddress local)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(local, 0));
        socket.Connect(new IPEndPoint(IPAddress.Loopback, server.EndPoint.Port));
        return socket;
    }

    /// <summary>The first message the server sent, as a reply envelope.</summary>
    private static ReplyEnvelope ReadReply(Socket socket)
    {
        socket.ReceiveTimeout = 10_000;
        using var stream = new NetworkStream(socket, ownsSocket: false);
        var body = MessageFraming.Read(stream);
        Assert.NotNull(body);
        return FrontEndWire.Decode<ReplyEnvelope>(new System.Buffers.ReadOnlySequence<byte>(body));
    }
}

using System.Collections.Concurrent;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Camdoop.Runtime.Security;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Sockets;
using Camdoop.Runtime.Transport.Streams;
using Camdoop.Tests.Shared;

namespace Camdoop.Runtime.Tests.Transport;

/// <summary>Kernel-socket streams between two servers over real TCP on the loopback interface.</summary>
public sealed class SocketStreamTransportTests : IDisposable
{
    private static readonly Torus Servers = new(2, 2, 2);
    private static readonly Coordinate A = new(0, 0, 0);
    private static readonly Coordinate B = new(1, 0, 0);
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    private readonly List<IDisposable> _owned = [];

    public void Dispose()
    {
        for (int i = _owned.Count - 1; i >= 0; i--)
        {
            _owned[i].Dispose();
        }
    }

    [Fact]
    public void StreamsCarryEveryByteInOrderBothWaysOnTheLoop()
    {
        var (a, b) = Pair();
        var writers = new[]
        {
            a.Send(B, 5_000_003, seed: 1),
            a.Send(B, 70_001, seed: 2),
            b.Send(A, 3_000_000, seed: 3),
            a.Send(B, 0, seed: 4),
        };
        foreach (var w in writers)
        {
            Assert.True(w.Delivered.Wait(Patience), "a stream was not delivered");
        }
        Assert.True(a.WaitForEnded(1, Patience));
        Assert.True(b.WaitForEnded(3, Patience));
        // Each stream's bytes are its pattern, in order, each once; and only the node's loop thread saw them.
        Assert.Equal([0L, 70_001, 5_000_003], b.Ended.Select(r => r.Length).Order());
        Assert.All(b.Ended.Concat(a.Ended), r => Assert.True(r.Intact, $"stream {r.Seed} was corrupted"));
        Assert.Equal(3_000_000, a.Ended.Single().Length);
        Assert.False(a.Loop.WrongThread || b.Loop.WrongThread, "a callback ran off the event loop");
        Assert.Equal(0, a.Transport.StreamsFailed + b.Transport.StreamsFailed);
    }

    [Fact]
    public void AReaderThatDoesNotTakeBytesHoldsTheWriterBack()
    {
        var (a, b) = Pair();
        // B's event loop is busy: it takes no bytes, the kernel's buffers fill, and then A's stream.
        using var busy = new ManualResetEventSlim();
        b.Loop.Post(busy.Wait);
        var writer = a.Send(B, 40_000_000, seed: 8);
        Assert.True(SpinWait.SpinUntil(() => writer.SawFull, Patience), "the writer was never held back");
        Assert.False(writer.Delivered.IsSet);
        busy.Set();
        Assert.True(writer.Delivered.Wait(Patience));
        Assert.True(writer.WaitedForRoom, "the writer was not told of room");
        Assert.True(b.WaitForEnded(1, Patience));
        Assert.True(b.Ended.Single().Intact);
        Assert.Equal(40_000_000, b.Ended.Single().Length);
    }

    [Fact]
    public void AStreamOpenedBeforeThePeerListensIsDeliveredOnceItDoes()
    {
        var a = Server(A, listen: true);
        var b = Server(B, listen: false);
        var writer = a.Send(B, 100_000, seed: 9);
        Thread.Sleep(300);
        Assert.False(writer.Delivered.IsSet);
        b.Loop.Post(() => b.Transport.Listen(b));
        Assert.True(writer.Delivered.Wait(Patience));
        Assert.True(b.WaitForEnded(1, Patience));
        Assert.True(b.Ended.Single().Intact);
    }

    [Fact]
    public void ARefusedStreamFailsAtTheSenderInsteadOfLookingDelivered()
    {
        var (a, b) = Pair();
        b.Refuse = true;
        var writer = a.Send(B, 10_000, seed: 5);
        Assert.True(a.WaitForFailure(Patience), "the sender was not told");
        Assert.False(writer.Delivered.IsSet);
        Assert.Equal(1, b.Transport.ConnectionsRejected);
        Assert.Empty(b.Ended);
    }

    [Fact]
    public void GarbageAndASenderThatStopsEarlyAreDroppedAndCounted()
    {
        var (a, b) = Pair();
        var endPoint = b.Transport.LocalEndPoint!;
        // Not TLS: rejected before any reader sees it.
        using (var garbage = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            garbage.Connect(endPoint);
            garbage.Send("GET / HTTP/1.1\r\n\r\n"u8);
            garbage.Shutdown(SocketShutdown.Send);
            SpinWait.SpinUntil(() => b.Transport.ConnectionsRejected == 1, Patience);
        }
        Assert.Equal(1, b.Transport.ConnectionsRejected);
        // A valid preamble, some bytes, then a close without the trailer: as a sender's process dying looks.
        using (var truncated = OpenTls(endPoint, TestCredentials.Node(A.Name).Current.Certificate))
        {
            truncated.Write([0x43, 0x44, 0x53, 0x31, 0, 0, 0, 0]);
            truncated.Write(new byte[5000]);
            truncated.Flush();
        }
        Assert.True(b.WaitForFailure(Patience), "the truncated stream was not reported");
        Assert.Empty(b.Ended);
        // The transport still works.
        var writer = a.Send(B, 20_000, seed: 6);
        Assert.True(writer.Delivered.Wait(Patience));
        Assert.True(b.WaitForEnded(1, Patience));
    }

    [Fact]
    public void OnlyANodeOfTheClusterCanOpenAStreamAndOnlyAsItself()
    {
        var b = Server(B, listen: true);
        var endPoint = b.Transport.LocalEndPoint!;
        byte[] preambleOfA = [0x43, 0x44, 0x53, 0x31, 0, 0, 0, 0];
        // A stream in clear, as anyone on the client network could send it: refused, no reader sees it.
        using (var plain = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp))
        {
            plain.Connect(endPoint);
            plain.Send(preambleOfA);
            plain.Send(new byte[1000]);
            plain.Shutdown(SocketShutdown.Send);
            SpinWait.SpinUntil(() => b.Transport.ConnectionsRejected == 1, Patience);
        }
        // TLS with a client's certificate of the cluster, or another CA's: refused.
        using var client = ClusterCredentials.Load(TestCredentials.ClientDirectory, CertificateRole.Client);
        using var foreign = TestCredentials.ForeignClient;
        foreach (var certificate in new[] { client.Certificate, foreign.Certificate })
        {
            using var stream = OpenTls(endPoint, certificate);
            TrySend(stream, preambleOfA);
        }
        // A node of the cluster (0,1,0) whose preamble says it is another (0,0,0): refused.
        using (var impostor = OpenTls(endPoint, TestCredentials.Node("0,1,0").Current.Certificate))
        {
            TrySend(impostor, preambleOfA);
        }
        SpinWait.SpinUntil(() => b.Transport.ConnectionsRejected == 4, Patience);
        Assert.Equal(4, b.Transport.ConnectionsRejected);
        Assert.Equal(4, b.Transport.ConnectionsUnauthenticated);
        Assert.Equal(0, b.Accepted);
        // The real 0,0,0 is accepted.
        var a = Server(A, listen: false);
        var writer = a.Send(B, 10_000, seed: 8);
        Assert.True(writer.Delivered.Wait(Patience));
        Assert.True(b.WaitForEnded(1, Patience));
        Assert.Equal(1, b.Accepted);
    }

    /// <summary>A TLS connection to a stream port showing <paramref name="certificate"/>; the server's is not checked.</summary>
    private static SslStream OpenTls(IPEndPoint endPoint, X509Certificate2 certificate)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Connect(endPoint);
        var ssl = new SslStream(new NetworkStream(socket, ownsSocket: true));
        ssl.AuthenticateAsClient(new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            EnabledSslProtocols = SslProtocols.Tls13,
            LocalCertificateSelectionCallback = (_, _, _, _, _) => certificate,
            RemoteCertificateValidationCallback = (_, _, _, _) => true,
        });
        return ssl;
    }

    /// <summary>Writes, unless the server has already hung up (it may refuse before the bytes arrive).</summary>
    private static void TrySend(SslStream stream, byte[] bytes)
    {
        try
        {
            stream.Write(bytes);
            stream.Write(new byte[1000]);
            stream.Flush();
        }
        catch (IOException)
        {
        }
    }

    private (TestServer A, TestServer B) Pair() => (Server(A, listen: true), Server(B, listen: true));

    private TestServer Server(Coordinate self, bool listen)
    {
        var server = new TestServer(self, this);
        _owned.Add(server);
        if (listen)
        {
            server.Loop.Invoke(() => server.Transport.Listen(server));
        }
        return server;
    }

    private readonly Dictionary<Coordinate, int> _ports = [];

    private IPEndPoint AddressOf(Coordinate server)
    {
        lock (_ports)
        {
            if (!_ports.TryGetValue(server, out int port))
            {
                // A free port now, for a listener that may start later.
                using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
                port = ((IPEndPoint)probe.LocalEndPoint!).Port;
                _ports[server] = port;
            }
            return new IPEndPoint(IPAddress.Loopback, port);
        }
    }

    /// <summary>A pattern of bytes a stream carries, determined by its seed and offset.</summary>
    private static byte Pattern(int seed, long offset) => (byte)((offset * 31) + (seed * 7) + (offset >> 11));

    /// <summary>One server: an event loop thread, its transport, and the readers of what it accepts.</summary>
    private sealed class TestServer : IStreamAcceptor, IDisposable
    {
        private readonly SemaphoreSlim _ended = new(0);
        private readonly SemaphoreSlim _failed = new(0);

        public TestServer(Coordinate self, SocketStreamTransportTests owner)
        {
            Loop = new TestLoop();
            Transport = new SocketStreamTransport(self, Servers, owner.AddressOf(self), owner.AddressOf, Loop.Post, TestCredentials.Node(self.Name),
                new SocketStreamOptions { SendBufferBytes = 256 * 1024, ReceiveChunkBytes = 16 * 1024 });
            Transport.StreamFailed += (_, _) =>
            {
                Loop.Check();
                _failed.Release();
            };
        }

        public TestLoop Loop { get; }

        public SocketStreamTransport Transport { get; }

        public bool Refuse { get; set; }

        public ConcurrentBag<PatternReader> Ended { get; } = [];

        private int _accepted;

        public int Accepted => Volatile.Read(ref _accepted);

        public IStreamReader? Accept(Coordinate peer)
        {
            Loop.Check();
            Interlocked.Increment(ref _accepted);
            return Refuse ? null : new PatternReader(this);
        }

        public PatternWriter Send(Coordinate peer, long bytes, int seed)
        {
            var writer = new PatternWriter(Loop, bytes, seed);
            Loop.Invoke(() => writer.Start(Transport.Open(peer, writer)));
            return writer;
        }

        public bool WaitForEnded(int count, TimeSpan timeout)
        {
            for (int i = Ended.Count; i < count; i++)
            {
                if (!_ended.Wait(timeout))
                {
                    return false;
                }
            }
            return true;
        }

        public bool WaitForFailure(TimeSpan timeout) => _failed.Wait(timeout);

        public void OnEnded(PatternReader reader)
        {
            Ended.Add(reader);
            _ended.Release();
        }

        public void Dispose()
        {
            Transport.Dispose();
            Loop.Dispose();
        }
    }

    /// <summary>Reads a stream whose first 4 bytes are its seed, then checks every byte against the pattern.</summary>
    private sealed class PatternReader(TestServer server) : IStreamReader
    {
        private readonly byte[] _seedBytes = new byte[4];
        private long _offset = -4;

        public int Seed { get; private set; }

        public long Length => Math.Max(0, _offset);

        public bool Intact { get; private set; } = true;

        public void OnData(ReadOnlySpan<byte> data)
        {
            server.Loop.Check();
            foreach (byte b in data)
            {
                if (_offset < 0)
                {
                    _seedBytes[(int)(_offset + 4)] = b;
                    if (++_offset == 0)
                    {
                        Seed = BitConverter.ToInt32(_seedBytes);
                    }
                    continue;
                }
                Intact &= b == Pattern(Seed, _offset);
                _offset++;
            }
        }

        public void OnEnd()
        {
            server.Loop.Check();
            Intact &= _offset >= 0;
            server.OnEnded(this);
        }
    }

    /// <summary>Writes its seed and then the pattern, as much as the stream takes, until every byte is written.</summary>
    private sealed class PatternWriter(TestLoop loop, long bytes, int seed) : IStreamWriter
    {
        private long _offset = -4;

        public long Bytes => bytes;

        public bool WaitedForRoom { get; private set; }

        public bool SawFull { get; private set; }

        public ManualResetEventSlim Delivered { get; } = new();

        public void Start(IOutboundByteStream stream) => Write(stream);

        public void OnWritable(IOutboundByteStream stream)
        {
            loop.Check();
            WaitedForRoom = true;
            Write(stream);
        }

        public void OnDelivered(IOutboundByteStream stream)
        {
            loop.Check();
            Delivered.Set();
        }

        private void Write(IOutboundByteStream stream)
        {
            while (_offset < bytes)
            {
                var space = stream.WriteSpace();
                if (space.IsEmpty)
                {
                    SawFull = true;
                    return;
                }
                int n = 0;
                while (n < space.Length && _offset < bytes)
                {
                    space[n++] = _offset < 0 ? BitConverter.GetBytes(seed)[(int)(_offset + 4)] : Pattern(seed, _offset);
                    _offset++;
                }
                stream.Commit(n);
            }
            stream.End();
        }
    }

    /// <summary>A single thread that runs posted actions in order, as a node's event loop does.</summary>
    private sealed class TestLoop : IDisposable
    {
        private readonly BlockingCollection<Action> _actions = [];
        private readonly Thread _thread;

        public TestLoop()
        {
            _thread = new Thread(() =>
            {
                foreach (var action in _actions.GetConsumingEnumerable())
                {
                    action();
                }
            })
            { IsBackground = true, Name = "test event loop" };
            _thread.Start();
        }

        public bool WrongThread { get; private set; }

        public void Post(Action action) => _actions.Add(action);

        public void Invoke(Action action)
        {
            using var done = new ManualResetEventSlim();
            Post(() =>
            {
                action();
                done.Set();
            });
            done.Wait();
        }

        public void Check() => WrongThread |= Thread.CurrentThread != _thread;

        public void Dispose()
        {
            _actions.CompleteAdding();
            _thread.Join(TimeSpan.FromSeconds(5));
        }
    }
}

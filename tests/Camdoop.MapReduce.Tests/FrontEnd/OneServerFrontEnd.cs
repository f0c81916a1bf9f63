using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.KeyRouting;
using Camdoop.Monitoring.Service;
using Camdoop.Records;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// The real front-end (<see cref="FrontEndServer"/> serving <see cref="FrontEndSession"/>s, with a shared memory
/// budget and query limit built as the node builds them) on loopback, in front of one server's event loop running the
/// front-end's services and the monitoring service, with no links: its chunk store keeps every chunk here, and every
/// query round is this server's alone.
/// </summary>
internal sealed class OneServerFrontEnd : IDisposable
{
    private readonly NodeEventLoop _loop;
    private readonly MonitorService _monitor = new(jobs: null);
    private readonly string _data = Path.Combine(Path.GetTempPath(), $"camdoop-frontend-{Environment.ProcessId}-{Guid.NewGuid():N}");

    public OneServerFrontEnd(FrontEndServerOptions? options = null)
    {
        _loop = new NodeEventLoop(driver => new NodeHost(new Coordinate(0, 0, 0), new Torus(2, 2, 2), driver, new FramePool(), new NodeOptions { DataDirectory = _data }));
        KeyRoutingService.Install(_loop.Host);
        PingService.Install(_loop.Host);
        ChunkStoreService.Install(_loop.Host);
        _loop.Host.Register(_monitor);
        _loop.Start();
        var node = new FrontEndNode(_loop, () => Task.FromResult(JsonSerializer.SerializeToElement(new { })));
        Options = options ?? new FrontEndServerOptions();
        Budget = new FrontEndMemoryBudget(Options.MaxBytesHeld, Options.MemoryWait);
        Queries = new StandingQueryLimit(Options.MaxQueries, Options.MaxQueriesPerClient);
        long maxChunk = Options.MaxBytesInFlight - Options.MaxMessageBytes;
        Server = new FrontEndServer(new IPEndPoint(IPAddress.Loopback, 0), Camdoop.Tests.Shared.TestCredentials.Node(), () => new FrontEndSession(node, maxChunk, Budget, Queries), Options);
        Server.Start();
    }

    public FrontEndServerOptions Options { get; }

    /// <summary>Where the server's chunk store keeps its replicas.</summary>
    public string ChunksDirectory => Path.Combine(_data, "chunks");

    public FrontEndServer Server { get; }

    public FrontEndMemoryBudget Budget { get; }

    public StandingQueryLimit Queries { get; }

    public FrontEndClient Connect() => FrontEndServerTests.Connect(Server);

    /// <summary>Queries the monitoring service is asking now (each client query is one until it is cancelled).</summary>
    public Task<int> MonitorQueriesAsync() => _loop.InvokeAsync(() => _monitor.Running);

    /// <summary>Stores <paramref name="bytes"/> as dataset <paramref name="name"/>, in chunks of <paramref name="chunkBytes"/>, each sent in parts.</summary>
    public static IReadOnlyList<string> Put(FrontEndClient client, string name, byte[] bytes, int chunkBytes, int partBytes)
    {
        int chunks = (bytes.Length + chunkBytes - 1) / chunkBytes;
        client.Call(new PutBeginRequest { Name = name, Format = "text", Chunks = chunks, TotalBytes = bytes.Length });
        var ids = new List<string>();
        for (int c = 0; c < chunks; c++)
        {
            var chunk = bytes.AsMemory(c * chunkBytes, Math.Min(chunkBytes, bytes.Length - (c * chunkBytes)));
            for (int offset = 0; offset < chunk.Length; offset += partBytes)
            {
                int n = Math.Min(partBytes, chunk.Length - offset);
                bool final = offset + n == chunk.Length;
                var reply = client.Call(new PutChunkRequest
                {
                    Index = c,
                    Length = chunk.Length,
                    Offset = offset,
                    Data = chunk.Slice(offset, n),
                    Final = final,
                    Checksum = final ? (long)XxHash64.Hash(chunk.Span) : null,
                });
                if (final)
                {
                    ids.Add(reply.Chunk!);
                }
            }
        }
        client.Call(new PutEndRequest());
        return ids;
    }

    /// <summary>A chunk's bytes, as `camdoop get` reads them.</summary>
    public static byte[] Get(FrontEndClient client, string chunk)
    {
        var bytes = new MemoryStream();
        var reply = client.Call(new GetChunkRequest { Chunk = chunk }, part =>
        {
            Assert.Equal(bytes.Length, part.Offset);
            bytes.Write(part.Data.Span);
        });
        Assert.Equal(reply.Length, bytes.Length);
        return bytes.ToArray();
    }

    /// <summary>Waits (up to 30 s: a loaded machine may be slow to notice a client gone) until <paramref name="done"/> holds.</summary>
    public static async Task WaitForAsync(Func<Task<bool>> done, Func<string> what)
    {
        var clock = Stopwatch.StartNew();
        while (!await done())
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), $"timed out waiting: {what()}");
            await Task.Delay(20);
        }
    }

    /// <summary>
    /// An authenticated connection from <paramref name="local"/> (a 127.x address of its own: what the front-end counts
    /// per client), speaking the protocol by hand.
    /// </summary>
    public RawConnection ConnectFrom(IPAddress local)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        socket.Bind(new IPEndPoint(local, 0));
        socket.Connect(new IPEndPoint(IPAddress.Loopback, Server.EndPoint.Port));
        var plain = new NetworkStream(socket, ownsSocket: true) { ReadTimeout = 30_000, WriteTimeout = 30_000 };
        Assert.True(FrontEndWire.Decode<ReplyEnvelope>(new System.Buffers.ReadOnlySequence<byte>(MessageFraming.Read(plain)!)).Ok, "the front-end did not greet");
        var ssl = new System.Net.Security.SslStream(plain);
        using (var credentials = Camdoop.Tests.Shared.TestCredentials.Client)
        {
            ssl.AuthenticateAsClient(credentials.ClientOptions("127.0.0.1"));
        }
        var connection = new RawConnection(ssl);
        Assert.True(connection.ReadReply().Ok, "the front-end refused the client's certificate");
        return connection;
    }

    public void Dispose()
    {
        Server.Dispose();
        _loop.Dispose();
        if (Directory.Exists(_data))
        {
            Directory.Delete(_data, recursive: true);
        }
    }

    /// <summary>A connection that sends requests and reads replies one message at a time.</summary>
    internal sealed class RawConnection(Stream stream) : IDisposable
    {
        private readonly Stream _stream = stream;

        public void Send(FrontEndRequest request) => _stream.Write(MessageFraming.Frame(request));

        public byte[] ReadBody() => MessageFraming.Read(_stream) ?? throw new IOException("the front-end closed the connection");

        public ReplyEnvelope ReadReply() => FrontEndWire.Decode<ReplyEnvelope>(new System.Buffers.ReadOnlySequence<byte>(ReadBody()));

        public void Dispose() => _stream.Dispose();
    }
}

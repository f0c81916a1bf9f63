using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Camdoop.ChunkStore;
using Camdoop.Cli.Tests.Support;
using Camdoop.FrontEnd;
using Camdoop.Hosting;
using Camdoop.Hosting.Logging;
using Camdoop.Records;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Tests.Shared;

namespace Camdoop.Cli.Tests.Metrics;

/// <summary>
/// A real node (<see cref="CamdoopNode"/>: its services, status timer, meter, front-end and web view) in this test
/// process, a server (0,0,0 unless told, logging text unless told) of a 2x2x2 torus with no port cabled, so that it needs no root: its front-end and web view
/// listen on loopback with the test cluster's credentials, its status is taken every 100 ms, and every query round
/// is its own alone (1 of the torus's 8 servers answers).
/// </summary>
public sealed class OneNode : IDisposable
{
    private readonly string _data = Directory.CreateTempSubdirectory("camdoop-one-node-").FullName;

    public OneNode()
        : this(new Coordinate(0, 0, 0))
    {
    }

    public OneNode(Coordinate self, NodeLogFormat logFormat = NodeLogFormat.Text)
    {
        Node = CamdoopNode.Start(new NodeSettings
        {
            Self = self,
            Torus = new Torus(2, 2, 2),
            Interfaces = new string?[Ports.Count],
            DataDirectory = _data,
            UplinkAddress = IPAddress.Loopback,
            FrontEndPort = FreePort(),
            WebPort = FreePort(),
            CertsDirectory = TestCredentials.Node(self.Name).Directory,
            LogFile = Path.Combine(_data, "node.log"),
            LogFormat = logFormat,
            WarmUp = false,
            Node = new NodeOptions { DataDirectory = _data, IsolateServiceFaults = true },
            StatusInterval = TimeSpan.FromMilliseconds(100),
        });
    }

    public CamdoopNode Node { get; }

    /// <summary>The front-end's address, HOST:PORT.</summary>
    public string FrontEnd => Node.FrontEnd!.EndPoint.ToString();

    public string ClientCerts => TestCredentials.ClientDirectory;

    public FrontEndClient Connect() => FrontEndClient.Connect(FrontEnd, TestCredentials.Client);

    /// <summary>An HTTPS client of the web view that trusts the test cluster's CA only, keeps no cookies and follows no redirect.</summary>
    public HttpClient Web()
    {
        using var client = TestCredentials.Client;
        var authority = X509CertificateLoader.LoadCertificate(client.Authority.RawData);
        return CaTrustingHttpClient.Create(authority, TimeSpan.FromSeconds(30), new Uri($"https://{Node.Web!.Server!.EndPoint}/"));
    }

    /// <summary>Stores <paramref name="bytes"/> as a chunk of this server's store, as a replica write would.</summary>
    public void StoreChunk(string dataset, int index, byte[] bytes)
    {
        var meta = new ChunkMeta
        {
            Id = ChunkPlacement.ChunkId(Node.Host.Torus, dataset, index, nonce: 7),
            Length = bytes.Length,
            Checksum = XxHash64.Hash(bytes),
            Dataset = dataset,
            Index = index,
            Count = 1,
            DatasetBytes = bytes.Length,
        };
        var stored = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        Node.Loop.Post(() => Node.Stack!.Store!.StoreLocal(meta, bytes, stored.SetResult));
        Assert.Null(stored.Task.WaitAsync(TimeSpan.FromSeconds(30)).Result);
    }

    public void Dispose()
    {
        Node.Dispose();
        Directory.Delete(_data, recursive: true);
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}

using System.Net;
using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd;
using Camdoop.KeyRouting;
using Camdoop.Monitoring.Jobs;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Security;
using Camdoop.Runtime.Topology;
using Camdoop.Server;

namespace Camdoop.Cli.Tests.Support;

/// <summary>
/// One server's front-end and web view in this process, on loopback, without links: a cluster CA made in a temporary
/// directory, the node certificate it signed for the front-end and the web view, a client certificate for the CLI,
/// and an HTTPS client that trusts that CA only.
/// </summary>
internal sealed class WebFrontEnd : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-web-frontend-").FullName;
    private readonly NodeEventLoop _loop;
    private readonly ClusterCredentials _credentials;
    private readonly FrontEndServer _frontEnd;

    public WebFrontEnd(IJobSource? jobs = null)
    {
        ClientCerts = Path.Combine(_directory, "client");
        ClusterAuthority.Init(Path.Combine(_directory, "ca"), "web-command-test", TimeSpan.FromDays(1)).Dispose();
        using (var authority = ClusterAuthority.Load(Path.Combine(_directory, "ca")))
        {
            ClusterAuthority.Issue(authority, CertificateRole.Node, "0,0,0", [IPAddress.Loopback], TimeSpan.FromDays(1), Path.Combine(_directory, "node")).Dispose();
            ClusterAuthority.Issue(authority, CertificateRole.Client, "web-test", [], TimeSpan.FromDays(1), ClientCerts).Dispose();
        }
        _credentials = ClusterCredentials.Load(Path.Combine(_directory, "node"), CertificateRole.Node);
        string data = Path.Combine(_directory, "data");
        _loop = new NodeEventLoop(driver => new NodeHost(new Coordinate(0, 0, 0), new Torus(2, 2, 2), driver, new FramePool(), new NodeOptions { DataDirectory = data }));
        KeyRoutingService.Install(_loop.Host);
        PingService.Install(_loop.Host);
        var store = ChunkStoreService.Install(_loop.Host);
        _loop.Host.Register(new MonitorService(jobs, storage: new ChunkStoreStorageSource(store)));
        _loop.Start();
        var node = new FrontEndNode(_loop, () => Task.FromResult(JsonSerializer.SerializeToElement(new { })));
        View = new Camdoop.FrontEnd.Web.WebView(node);
        _frontEnd = new FrontEndServer(new IPEndPoint(IPAddress.Loopback, 0), new CredentialsSource(Path.Combine(_directory, "node"), CertificateRole.Node), () => new FrontEndSession(node, web: View));
        _frontEnd.Start();
        View.Start(new IPEndPoint(IPAddress.Loopback, 0), () => _credentials.Certificate);
    }

    /// <summary>The front-end's address, HOST:PORT.</summary>
    public string FrontEnd => _frontEnd.EndPoint.ToString();

    /// <summary>The client credentials directory the CLI connects with (--certs).</summary>
    public string ClientCerts { get; }

    public Camdoop.FrontEnd.Web.WebView View { get; }

    /// <summary>The web view's address, as `camdoop web` prints it.</summary>
    public string Url => $"https://{View.Server!.EndPoint}/";

    /// <summary>An HTTPS client that trusts this cluster's CA, keeps no cookies and follows no redirect.</summary>
    public HttpClient Browser() => CaTrustingHttpClient.Create(_credentials.Authority, TimeSpan.FromSeconds(30));

    public void Dispose()
    {
        _frontEnd.Dispose();
        View.Dispose();
        _loop.Dispose();
        _credentials.Dispose();
        Directory.Delete(_directory, recursive: true);
    }
}

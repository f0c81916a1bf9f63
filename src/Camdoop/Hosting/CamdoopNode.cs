using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Web;
using Camdoop.FrontEnd.Wire;
using Camdoop.Hosting.Logging;
using Camdoop.JobControl;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs;
using Camdoop.Monitoring.Metrics;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Security;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Sockets;
using Camdoop.Server;
using Microsoft.Extensions.Logging;
using LogLevel = Camdoop.Runtime.Logging.LogLevel;

namespace Camdoop.Hosting;

/// <summary>
/// One real CamCube server in a process: an event loop driving a <see cref="NodeHost"/> with the product's services
/// (key routing, ping, chunk store, Camdoop), one raw-Ethernet link per cabled port (libpcap or AF_PACKET, as the
/// config's link driver says), the front-end's TCP server when the server is on the switch network, and a status file
/// rewritten periodically. The services are the same classes the simulator hosts. <see cref="Stop"/> shuts everything down in order and records the final status.
/// </summary>
public sealed class CamdoopNode : IDisposable
{
    private readonly NodeSettings _settings;
    private readonly NodeLogging _log;
    private readonly ILogger _nodeLog;
    private readonly ILogger _frontEndLog;
    private readonly ILogger _webLog;
    private readonly Lock _stopLock = new();
    private readonly DateTime _startedUtc = DateTime.UtcNow;
    private Timer? _statusTimer;
    private SocketStreamTransport? _streams;
    private CredentialsSource? _credentials;
    private int _statusBusy;
    private readonly ProcessStats _processStats;
    private readonly NodeMeter _meter;
    private bool _stopped;

    private CamdoopNode(NodeSettings settings, NodeLogging log, NodeEventLoop loop)
    {
        _settings = settings;
        _log = log;
        _nodeLog = log.CreateLogger(NodeProcessLogCategories.Node);
        _frontEndLog = log.CreateLogger(NodeProcessLogCategories.FrontEnd);
        _webLog = log.CreateLogger(NodeProcessLogCategories.Web);
        Loop = loop;
        StatusPath = Path.Combine(settings.DataDirectory, "status.json");
        _processStats = new ProcessStats(settings.DataDirectory);
        _meter = new NodeMeter(settings.Self);
    }

    public NodeSettings Settings => _settings;

    public NodeEventLoop Loop { get; }

    public NodeHost Host => Loop.Host;

    public FrontEndServer? FrontEnd { get; private set; }

    /// <summary>The live web view, when the config gives a web port.</summary>
    public WebView? Web { get; private set; }

    /// <summary>What the front-end holds for all its clients (set with the front-end).</summary>
    private FrontEndMemoryBudget? _frontEndBudget;

    /// <summary>The front-end's places for its clients' monitoring queries (set with the front-end).</summary>
    private StandingQueryLimit? _frontEndQueries;

    public string StatusPath { get; }

    /// <summary>The node's counters as System.Diagnostics.Metrics instruments, updated with every status snapshot.</summary>
    public NodeMeter Meter => _meter;

    /// <summary>
    /// Builds and starts the server: data directory, log, services, links (opened in this process's network
    /// namespace), front-end and status file. Fails with one clear line (missing interface, MTU too small, no
    /// CAP_NET_RAW, front-end address in use) and leaves nothing running.
    /// </summary>
    public static CamdoopNode Start(NodeSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        Directory.CreateDirectory(settings.DataDirectory);
        var log = NodeLogging.Open(settings.LogFile, settings.Self, settings.LogLevel, settings.LogFormat);
        var pool = new FramePool(1024);
        var loop = new NodeEventLoop(driver => new NodeHost(settings.Self, settings.Torus, driver, pool, settings.Node), log.Runtime);
        var node = new CamdoopNode(settings, log, loop);
        try
        {
            node.RegisterServices();
            node.OpenLinks(pool);
            NodeLogMessages.Starting(node._nodeLog, settings.Torus.ToString(), Environment.ProcessId, settings.DataDirectory, settings.LinkDriver.Name(), node.DescribePorts());
            loop.Start();
            node.StartFrontEnd();
            node.WriteStatus("running");
            node._statusTimer = new Timer(_ => node.OnStatusTimer(), null, settings.StatusInterval, settings.StatusInterval);
            return node;
        }
        catch
        {
            node.Stop();
            throw;
        }
    }

    /// <summary>A status snapshot, taken on the event loop.</summary>
    public Task<NodeStatus> StatusAsync(string state = "running") => Loop.InvokeAsync(() => BuildStatus(state));

    /// <summary>Stops the front-end, the status timer, the loop (services, links) and writes the final status. Idempotent.</summary>
    public void Stop()
    {
        lock (_stopLock)
        {
            if (_stopped)
            {
                return;
            }
            _stopped = true;
        }
        _statusTimer?.Dispose();
        Web?.Dispose();
        FrontEnd?.Dispose();
        _streams?.Dispose();
        NodeStatus? final = null;
        if (Loop.IsRunning)
        {
            try
            {
                var snapshot = StatusAsync("stopped");
                final = snapshot.Wait(TimeSpan.FromSeconds(5)) ? snapshot.Result : null;
            }
            catch (AggregateException)
            {
                final = null;
            }
        }
        Loop.Dispose();
        try
        {
            final?.Write(StatusPath);
        }
        catch (IOException)
        {
            // The data directory is gone (the testbed was torn down under us); nothing left to report to.
        }
        _meter.Dispose();
        NodeLogMessages.Stopped(_nodeLog);
        _log.Dispose();
    }

    public void Dispose() => Stop();

    private void RegisterServices()
    {
        // Job control loads every job this server runs (and checks those its front-end takes) through this catalog.
        Stack = ServerStack.OnTorus(Loop.Host, new ServerStackOptions
        {
            JobControl = new JobControlOptions { Jobs = JobCatalog.ForServer(_settings.JobAssemblyDirectory) },
            ChunkStore = _settings.ChunkStore,
            Streams = OpenStreams(),
            ProcessStats = _processStats,
            Metrics = new StatusMetricSource(this),
        });
    }

    /// <summary>The services this server runs.</summary>
    public ServerStack? Stack { get; private set; }

    /// <summary>
    /// Kernel TCP streams to the other servers on the switch network (TCP Camdoop), when the config gives a stream
    /// port; a stream that fails fails the tcp-mode jobs here.
    /// </summary>
    /// <summary>This server's TLS credentials (its node certificate under the cluster CA), read when first needed.</summary>
    private CredentialsSource Credentials => _credentials ??= LoadCredentials();

    private CredentialsSource LoadCredentials()
    {
        string directory = _settings.CertsDirectory ?? throw new FrontEndException("the front-end and the streams need a credentials directory ('certsDirectory' in the node config)");
        CredentialsSource source;
        try
        {
            source = new CredentialsSource(directory, CertificateRole.Node, line => NodeLogMessages.Warning(_nodeLog, line));
        }
        catch (CertificateException e)
        {
            throw new FrontEndException($"cannot use the server's credentials: {e.Message}", e);
        }
        if (source.Current.Identity.Name != _settings.Self.Name)
        {
            throw new FrontEndException($"the node certificate in {directory} is server {source.Current.Identity.Name}'s, not {_settings.Self.Name}'s");
        }
        return source;
    }

    private SocketStreamTransport? OpenStreams()
    {
        if (_settings.StreamPort == 0)
        {
            return null;
        }
        int port = _settings.StreamPort;
        var peers = _settings.PeerAddresses;
        _streams = new SocketStreamTransport(_settings.Self, _settings.Torus, new IPEndPoint(_settings.UplinkAddress!, port),
            peer => new IPEndPoint(peers[peer], port), Loop.Post, Credentials);
        _streams.StreamFailed += (peer, reason) =>
        {
            Host.Log(LogLevel.Warning, $"stream with {peer.Name} failed: {reason}");
            Stack?.JobControl.OnStreamFailed(peer, reason);
        };
        return _streams;
    }

    private void OpenLinks(FramePool pool)
    {
        var defaults = new RawEthernetOptions();
        var options = new RawEthernetOptions
        {
            Driver = _settings.LinkDriver,
            MaxFrameSize = _settings.MaxFrameSize,
            ReceiveBufferBytes = _settings.ReceiveBufferBytes ?? defaults.ReceiveBufferBytes,
            CaptureBufferBytes = _settings.ReceiveBufferBytes ?? defaults.CaptureBufferBytes,
            CarrierPollInterval = _settings.CarrierPollInterval,
        };
        foreach (var port in Ports.All)
        {
            var name = _settings.Interfaces[(int)port];
            if (name is null)
            {
                continue;
            }
            IRawEthernetLink link;
            try
            {
                link = RawEthernetLinks.Open(name, pool, options);
            }
            catch (RawEthernetException e)
            {
                throw new RawEthernetException($"port {port.Name()}: {e.Message}", e);
            }
            Loop.AttachLink(port, link);
        }
    }

    private void StartFrontEnd()
    {
        if (_settings.FrontEndPort == 0)
        {
            return;
        }
        var endpoint = new IPEndPoint(_settings.UplinkAddress ?? IPAddress.Any, _settings.FrontEndPort);
        var frontEndNode = new FrontEndNode(Loop, async () => JsonSerializer.SerializeToElement(await StatusAsync().ConfigureAwait(false), NodeConfig.JsonOptions));
        var credentials = Credentials;
        var options = _settings.FrontEnd;
        // An upload's chunk may take what a connection may hold less one message: the part carrying it.
        long maxChunk = options.MaxBytesInFlight - options.MaxMessageBytes;
        // Shared by every session: what one connection may hold is bounded above, what they all hold here.
        var budget = new FrontEndMemoryBudget(options.MaxBytesHeld, options.MemoryWait);
        var queries = new StandingQueryLimit(options.MaxQueries, options.MaxQueriesPerClient);
        // The web view exists before the front-end so that its sessions can hand out the view's login codes.
        var web = _settings.WebPort == 0 ? null : new WebView(frontEndNode);
        Web = web;
        var server = new FrontEndServer(endpoint, credentials, () => new FrontEndSession(frontEndNode, maxChunk, budget, queries, web), options, line => NodeLogMessages.Warning(_frontEndLog, line));
        _frontEndBudget = budget;
        _frontEndQueries = queries;
        server.Start();
        FrontEnd = server;
        NodeLogMessages.FrontEndListening(_frontEndLog, server.EndPoint.ToString(), credentials.Directory, credentials.Current.Identity.ToString());
        if (web is not null)
        {
            StartWebView(web);
        }
    }

    private void StartWebView(WebView web)
    {
        Func<X509Certificate2> certificate;
        string source;
        try
        {
            (certificate, source) = WebCertificate();
        }
        catch (CertificateException e)
        {
            throw new FrontEndException($"web view: {e.Message}", e);
        }
        web.Start(new IPEndPoint(_settings.UplinkAddress ?? IPAddress.Any, _settings.WebPort), certificate, log: line => NodeLogMessages.Warning(_webLog, line));
        NodeLogMessages.WebViewListening(_webLog, web.Server!.EndPoint.ToString(), source, Math.Round(web.Sessions.SessionLifetime.TotalHours, 1));
    }

    /// <summary>
    /// The web view's server certificate: the node's certificate of the cluster CA, asked at every handshake so that
    /// rotated files are picked up without a restart, and where it comes from (for the log).
    /// </summary>
    private (Func<X509Certificate2> Certificate, string Source) WebCertificate()
    {
        var credentials = Credentials;
        return (() => credentials.Current.Certificate, $"its node certificate from {credentials.Directory}");
    }

    private void OnStatusTimer()
    {
        if (Interlocked.Exchange(ref _statusBusy, 1) != 0)
        {
            return;
        }
        try
        {
            // Sampled here, off the event loop: they are system calls, which a service must not make.
            _processStats.Sample();
            WriteStatus("running");
        }
        // a failed status write is logged; the server keeps running
        catch (Exception e)
        {
            NodeLogMessages.StatusNotWritten(_nodeLog, StatusPath, e.Message);
        }
        finally
        {
            Volatile.Write(ref _statusBusy, 0);
        }
    }

    private void WriteStatus(string state)
    {
        var task = StatusAsync(state);
        if (task.Wait(TimeSpan.FromSeconds(5)))
        {
            task.Result.Write(StatusPath);
            // Off the loop: the meter's values come from the snapshot just taken, never from the loop itself.
            _meter.Update(NodeStatusMetrics.Read(task.Result));
        }
        else
        {
            NodeLogMessages.StatusSnapshotLate(_nodeLog, 5);
        }
    }

    /// <summary>Runs on the event loop.</summary>
    private NodeStatus BuildStatus(string state)
    {
        var host = Loop.Host;
        var links = new List<LinkStatus>(Ports.Count);
        int up = 0;
        foreach (var port in Ports.All)
        {
            var link = Loop.Link(port);
            int p = (int)port;
            bool isUp = host.IsLinkUp(port);
            up += isUp ? 1 : 0;
            links.Add(new LinkStatus
            {
                Port = port.Name(),
                Interface = _settings.Interfaces[p],
                Neighbour = host.Torus.Neighbour(host.Self, port).Name,
                Carrier = host.HasCarrier(port),
                Up = isUp,
                Heard = host.Monitor.HasHeard(port),
                Driver = link?.Driver.Name(),
                PeerMac = link is null || link.PeerMac.IsGroup ? null : link.PeerMac.ToString(),
                FramesSent = host.Counters.FramesSent[p],
                FramesReceived = host.Counters.FramesReceived[p],
                BytesSent = host.Counters.BytesSent[p],
                BytesReceived = host.Counters.BytesReceived[p],
                Drops = host.Counters.PortDrops[p],
                BusyNs = host.Counters.BacklogAt(port, host.Now),
                KernelDrops = link?.Counters.KernelDrops ?? 0,
                SendErrors = link?.Counters.SendErrors ?? 0,
            });
        }
        var counters = ServerCounters.Read(host);
        var node = new Dictionary<string, long>(counters["node"], StringComparer.Ordinal) { ["loopFaults"] = Loop.Faults };
        counters["node"] = node;
        var stats = _processStats.Latest;
        counters["process"] = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["cpuMs"] = stats.CpuMilliseconds,
            ["workingSetBytes"] = stats.MemoryBytes,
            ["diskFreeBytes"] = stats.DiskFreeBytes,
        };
        if (_streams is { } streams)
        {
            counters["streams"] = new Dictionary<string, long>(StringComparer.Ordinal)
            {
                ["rejected"] = streams.ConnectionsRejected,
                ["unauthenticated"] = streams.ConnectionsUnauthenticated,
                ["failed"] = streams.StreamsFailed,
            };
        }
        if (FrontEnd is { } fe)
        {
            counters["frontEnd"] = new Dictionary<string, long>(StringComparer.Ordinal)
            {
                ["connections"] = fe.ConnectionsAccepted,
                ["requests"] = fe.RequestsServed,
                ["malformed"] = fe.MalformedMessages,
                ["oversized"] = fe.OversizedMessages,
                ["truncated"] = fe.TruncatedMessages,
                ["refused"] = fe.ConnectionsRefused,
                ["handlerFailures"] = fe.HandlerFailures,
                ["authenticated"] = fe.ConnectionsAuthenticated,
                ["authNoHandshake"] = fe.RefusedNoHandshake,
                ["authCertificate"] = fe.RefusedCertificate,
                ["authMalformed"] = fe.RefusedMalformedHandshake,
                ["authEvicted"] = fe.HandshakesEvicted,
                ["authPerAddress"] = fe.RefusedPerAddress,
                ["authPoolFull"] = fe.RefusedPoolFull,
                ["overLimit"] = fe.OverLimit,
                ["writeTimeouts"] = fe.WriteTimeouts,
                ["idleClosed"] = fe.IdleClosed,
                ["bytesHeld"] = _frontEndBudget?.Held ?? 0,
                ["memoryRefused"] = _frontEndBudget?.Refusals ?? 0,
                ["queries"] = _frontEndQueries?.Running ?? 0,
                ["queriesRefused"] = _frontEndQueries?.Refused ?? 0,
            };
        }
        if (Web is { Server: { } web } view)
        {
            counters["web"] = new Dictionary<string, long>(StringComparer.Ordinal)
            {
                ["requests"] = web.Requests,
                ["badRequests"] = web.BadRequests,
                ["refused"] = web.Refused,
                ["failures"] = web.Failures,
                ["handshakeFailures"] = web.HandshakeFailures,
                ["unauthorized"] = view.Unauthorized,
                ["logins"] = view.Logins,
                ["sessions"] = view.Sessions.Count,
                ["notFound"] = view.NotFound,
                ["standingQueries"] = view.Queries.Count,
                ["scrapes"] = view.Scrapes,
            };
        }
        return new NodeStatus
        {
            Coordinate = host.Self.Name,
            Torus = host.Torus.ToString(),
            Pid = Environment.ProcessId,
            State = state,
            StartedUtc = _startedUtc,
            UpdatedUtc = DateTime.UtcNow,
            FrontEnd = FrontEnd?.EndPoint.ToString(),
            Web = Web?.Server is { } webServer ? $"https://{webServer.EndPoint}/" : null,
            Links = links,
            LinksUp = up,
            ReachableServers = host.GetService<KeyRoutingService>()!.ReachableCount,
            Counters = counters,
        };
    }

    private string DescribePorts() =>
        string.Join(", ", Ports.All.ToArray().Select(p => $"{p.Name()}={_settings.Interfaces[(int)p] ?? "-"}"));

    /// <summary>The metrics table of a real node: its whole status, read on the event loop when a round asks.</summary>
    private sealed class StatusMetricSource(CamdoopNode node) : IMetricSource
    {
        public void Read(List<MetricSample> samples) => samples.AddRange(NodeStatusMetrics.Read(node.BuildStatus("running")));
    }
}

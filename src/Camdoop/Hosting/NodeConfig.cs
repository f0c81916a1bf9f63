using System.Globalization;
using System.Net;
using System.Text.Json;
using System.Text.Json.Serialization;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Hosting.Logging;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Hosting;

/// <summary>
/// What one `camdoop node` process runs: the server's coordinate, the torus, the network interface cabled to each
/// of its six ports, its data directory, optionally its uplink address and front-end port on the switch network,
/// its log file, and the liveness tunables. Stored as JSON (camelCase); <see cref="Validate"/> turns it into
/// <see cref="NodeSettings"/> or fails with one clear line naming the bad field.
/// </summary>
public sealed record NodeConfig
{
    public static readonly JsonSerializerOptions JsonOptions = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        // Written for people: "+X", not "\u002BX" (the default escaping guards HTML, which this never is).
        Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
        ReadCommentHandling = JsonCommentHandling.Skip,
        AllowTrailingCommas = true,
    };

    /// <summary>"x,y,z".</summary>
    public string? Coordinate { get; init; }

    /// <summary>"XxYxZ", e.g. "3x3x3".</summary>
    public string? Torus { get; init; }

    /// <summary>Port name ("+X", "-X", "+Y", "-Y", "+Z", "-Z") to interface name. A port left out is permanently down.</summary>
    public Dictionary<string, string> Ports { get; init; } = [];

    public string? DataDirectory { get; init; }

    /// <summary>This server's address on the switch network (the front-end listens there); null: not on the switch.</summary>
    public string? UplinkAddress { get; init; }

    /// <summary>
    /// TCP port of the server's byte streams on the switch network (TCP Camdoop, mode tcp); 0: none, and tcp-mode jobs
    /// fail here. Needs <see cref="UplinkAddress"/> and <see cref="PeerAddresses"/>.
    /// </summary>
    public int StreamPort { get; init; }

    /// <summary>Every server's uplink address ("x,y,z" to an IP address), where its streams are opened (the same port).</summary>
    public Dictionary<string, string> PeerAddresses { get; init; } = [];

    /// <summary>TCP port of the front-end; 0 runs no front-end.</summary>
    public int FrontEndPort { get; init; }

    /// <summary>
    /// TCP port of the live web view (HTTPS only, on the front-end's address, for browsers logged in with a code from
    /// 'camdoop web'); 0, the default, serves none: a new listening port on the switch network is the operator's
    /// choice to make.
    /// </summary>
    public int WebPort { get; init; }

    /// <summary>
    /// The server's credentials directory: the cluster CA's certificate (ca.crt) and this server's node certificate and
    /// key (node.crt, node.key, made with `camdoop certs node`), and optionally revoked.txt. Required with a front-end
    /// or streams: every TCP connection is mutual TLS under the CA. Files replaced there are read again within
    /// seconds (certificate rotation without a restart).
    /// </summary>
    public string? CertsDirectory { get; init; }

    /// <summary>
    /// Run a few small jobs on a simulated cube in the process before the node starts, so that the first real job does
    /// not pay for compiling and loading its code paths (`camdoop node` does this; `--no-warm-up` overrides it).
    /// </summary>
    public bool WarmUp { get; init; } = true;

    /// <summary>How long a new front-end connection has to authenticate, in milliseconds.</summary>
    public int FrontEndHandshakeTimeoutMs { get; init; } = 10_000;

    /// <summary>Requests one front-end connection may have pipelined and not yet answered.</summary>
    public int FrontEndMaxRequestsInFlight { get; init; } = 16;

    /// <summary>Bytes the front-end holds for one connection at most: requests not yet served plus an upload's chunk.</summary>
    public long FrontEndMaxBytesInFlight { get; init; } = 256L << 20;

    /// <summary>
    /// Bytes the front-end holds for all its connections at once: uploads' chunk buffers and chunks read for downloads;
    /// at least <see cref="FrontEndMaxBytesInFlight"/>.
    /// </summary>
    public long FrontEndMaxBytesHeld { get; init; } = 1L << 30;

    /// <summary>Monitoring queries the front-end runs for its clients at once, at most its connections (64).</summary>
    public int FrontEndMaxQueries { get; init; } = 32;

    /// <summary>Monitoring queries one client address may run on the front-end at once, at most <see cref="FrontEndMaxQueries"/>.</summary>
    public int FrontEndMaxQueriesPerClient { get; init; } = 4;

    /// <summary>Log file; default node.log in the data directory; "-" for stderr (systemd's journal).</summary>
    public string? LogFile { get; init; }

    /// <summary>debug, info, warning or error.</summary>
    public string LogLevel { get; init; } = "info";

    /// <summary>text (one line an event: UTC time, level, server, message) or json (one JSON object a line, for log shippers).</summary>
    public string LogFormat { get; init; } = "text";

    /// <summary>Liveness beacon interval on every link, in milliseconds.</summary>
    public double BeaconIntervalMs { get; init; } = 10;

    /// <summary>A link is declared down after this many silent beacon intervals.</summary>
    public int BeaconMisses { get; init; } = 3;

    /// <summary>How often each link's I/O thread checks the interface's carrier and kernel drop counter, in milliseconds.</summary>
    public int CarrierPollMs { get; init; } = 100;

    /// <summary>
    /// Seconds a server must be unreachable before the replicas it held are made again on other servers (default ten
    /// minutes, as HDFS waits).
    /// </summary>
    public double ReReplicateAfterSeconds { get; init; } = 600;

    /// <summary>Bytes a second each server sends, on average, to restore or move replicas (0: no cap).</summary>
    public long ReReplicateBytesPerSecond { get; init; } = 50L << 20;

    /// <summary>How often status.json in the data directory is rewritten, in milliseconds.</summary>
    public int StatusIntervalMs { get; init; } = 1000;

    /// <summary>Frames each service may queue per port.</summary>
    public int QueueCapacity { get; init; } = 64;

    /// <summary>
    /// Kernel receive buffer per link in bytes (the AF_PACKET socket's buffer, or the pcap capture ring); null keeps the
    /// runtime's default. Tests shrink it to provoke drops.
    /// </summary>
    public int? ReceiveBufferBytes { get; init; }

    /// <summary>Largest frame on the links, Ethernet header included (9,014 needs MTU 9,000).</summary>
    public int MaxFrameSize { get; init; } = FrameLayout.MaxFrameSize;

    /// <summary>"pcap" (libpcap through SharpPcap) or "afpacket" (AF_PACKET sockets); null: the runtime's default.</summary>
    public string? LinkDriver { get; init; }

    /// <summary>
    /// Seconds from the end of one scrub pass (every replica here read again and checked against its checksum) to the
    /// start of the next; 0 turns scrubbing off.
    /// </summary>
    public int ScrubIntervalSeconds { get; init; } = 86_400;

    /// <summary>How fast the scrubber reads replicas, bytes per second: low enough to leave the disk to jobs.</summary>
    public long ScrubBytesPerSecond { get; init; } = 20_000_000;

    /// <summary>
    /// The only directory user job assemblies load from, each named by its file name; null: built-in jobs only.
    /// Whoever reaches a front-end can submit a job, so a job names no path: the operator installs the code.
    /// </summary>
    public string? JobAssemblyDirectory { get; init; }

    public static NodeConfig Load(string path)
    {
        string text;
        try
        {
            text = File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new NodeConfigException($"cannot read node config {path}: {e.Message}");
        }
        try
        {
            return JsonSerializer.Deserialize<NodeConfig>(text, JsonOptions)
                ?? throw new NodeConfigException($"node config {path} is empty");
        }
        catch (JsonException e)
        {
            throw new NodeConfigException($"node config {path} is not valid JSON: {e.Message}");
        }
    }

    public void Save(string path) => File.WriteAllText(path, JsonSerializer.Serialize(this, JsonOptions));

    /// <summary>Checks every field and resolves the typed settings; throws <see cref="NodeConfigException"/>.</summary>
    public NodeSettings Validate()
    {
        if (Torus is null)
        {
            throw new NodeConfigException("node config: 'torus' is missing (e.g. \"3x3x3\")");
        }
        if (!Runtime.Topology.Torus.TryParse(Torus, out var torus, out var torusError))
        {
            throw new NodeConfigException($"node config: {torusError}");
        }
        if (Coordinate is null || !Runtime.Topology.Coordinate.TryParse(Coordinate, out var self) || !torus!.Contains(self))
        {
            throw new NodeConfigException($"node config: 'coordinate' must be a server of the {torus} torus, like \"0,1,2\" (got {Show(Coordinate)})");
        }
        if (string.IsNullOrWhiteSpace(DataDirectory))
        {
            throw new NodeConfigException("node config: 'dataDirectory' is missing");
        }
        var interfaces = new string?[Runtime.Topology.Ports.Count];
        foreach (var (name, iface) in Ports)
        {
            if (!Runtime.Topology.Ports.TryParse(name, out var port))
            {
                throw new NodeConfigException($"node config: port '{name}' is not one of +X, -X, +Y, -Y, +Z, -Z");
            }
            if (string.IsNullOrWhiteSpace(iface) || iface.Length > 15 || iface.Contains('/', StringComparison.Ordinal))
            {
                throw new NodeConfigException($"node config: port {name}: '{iface}' is not a network interface name");
            }
            if (interfaces[(int)port] is not null)
            {
                throw new NodeConfigException($"node config: port {port.Name()} is given twice");
            }
            interfaces[(int)port] = iface;
        }
        IPAddress? uplink = null;
        if (UplinkAddress is not null && !IPAddress.TryParse(UplinkAddress, out uplink))
        {
            throw new NodeConfigException($"node config: 'uplinkAddress' {Show(UplinkAddress)} is not an IP address");
        }
        if (FrontEndPort is < 0 or > 65535)
        {
            throw new NodeConfigException($"node config: 'frontEndPort' {FrontEndPort} is not a TCP port");
        }
        var peers = ValidateStreams(torus, uplink);
        if ((FrontEndPort != 0 || StreamPort != 0) && string.IsNullOrWhiteSpace(CertsDirectory))
        {
            throw new NodeConfigException("node config: 'certsDirectory' is missing: the front-end and the streams take only TLS connections under the cluster CA (make the directory with 'camdoop certs node')");
        }
        if (WebPort is < 0 or > 65535)
        {
            throw new NodeConfigException($"node config: 'webPort' {WebPort} is not a TCP port");
        }
        if (WebPort != 0 && FrontEndPort == 0)
        {
            throw new NodeConfigException("node config: 'webPort' needs a front-end ('frontEndPort'): the web view is served by the front-end, with its key");
        }
        if (WebPort != 0 && WebPort == FrontEndPort)
        {
            throw new NodeConfigException($"node config: 'webPort' and 'frontEndPort' are both {WebPort}");
        }
        if (FrontEndHandshakeTimeoutMs is < 100 or > 600_000)
        {
            throw new NodeConfigException("node config: 'frontEndHandshakeTimeoutMs' must be between 100 and 600000");
        }
        if (FrontEndMaxRequestsInFlight is < 1 or > 65536)
        {
            throw new NodeConfigException("node config: 'frontEndMaxRequestsInFlight' must be between 1 and 65536");
        }
        if (FrontEndMaxBytesInFlight < MinBytesInFlight)
        {
            throw new NodeConfigException($"node config: 'frontEndMaxBytesInFlight' must be at least {MinBytesInFlight} (two of the largest messages)");
        }
        if (FrontEndMaxBytesHeld < FrontEndMaxBytesInFlight)
        {
            throw new NodeConfigException($"node config: 'frontEndMaxBytesHeld' must be at least 'frontEndMaxBytesInFlight' ({FrontEndMaxBytesInFlight}), so that the chunk one connection may upload fits");
        }
        int connections = new FrontEndServerOptions().MaxConnections;
        if (FrontEndMaxQueries < 1 || FrontEndMaxQueries > connections)
        {
            throw new NodeConfigException($"node config: 'frontEndMaxQueries' must be between 1 and {connections} (the front-end's connections)");
        }
        if (FrontEndMaxQueriesPerClient < 1 || FrontEndMaxQueriesPerClient > FrontEndMaxQueries)
        {
            throw new NodeConfigException($"node config: 'frontEndMaxQueriesPerClient' must be between 1 and 'frontEndMaxQueries' ({FrontEndMaxQueries})");
        }
        var level = LogLevel.ToLowerInvariant() switch
        {
            "debug" => Runtime.Logging.LogLevel.Debug,
            "info" => Runtime.Logging.LogLevel.Info,
            "warning" or "warn" => Runtime.Logging.LogLevel.Warning,
            "error" => Runtime.Logging.LogLevel.Error,
            _ => throw new NodeConfigException($"node config: 'logLevel' {Show(LogLevel)} is not debug, info, warning or error"),
        };
        var logFormat = LogFormat.ToLowerInvariant() switch
        {
            "text" => NodeLogFormat.Text,
            "json" => NodeLogFormat.Json,
            _ => throw new NodeConfigException($"node config: 'logFormat' {Show(LogFormat)} is not text or json"),
        };
        if (!(BeaconIntervalMs is >= 0.1 and <= 60_000))
        {
            throw new NodeConfigException("node config: 'beaconIntervalMs' must be between 0.1 and 60000");
        }
        if (BeaconMisses is < 1 or > 1000)
        {
            throw new NodeConfigException("node config: 'beaconMisses' must be between 1 and 1000");
        }
        if (StatusIntervalMs is < 10 or > 3_600_000)
        {
            throw new NodeConfigException("node config: 'statusIntervalMs' must be between 10 and 3600000");
        }
        if (CarrierPollMs is < 1 or > 60_000)
        {
            throw new NodeConfigException("node config: 'carrierPollMs' must be between 1 and 60000");
        }
        if (!(ReReplicateAfterSeconds is >= 1 and <= 7 * 86_400))
        {
            throw new NodeConfigException("node config: 'reReplicateAfterSeconds' must be between 1 and 604800 (a week)");
        }
        if (ReReplicateBytesPerSecond < 0)
        {
            throw new NodeConfigException("node config: 'reReplicateBytesPerSecond' must be 0 (no cap) or more");
        }
        if (QueueCapacity is < 1 or > 65536)
        {
            throw new NodeConfigException("node config: 'queueCapacity' must be between 1 and 65536");
        }
        if (ReceiveBufferBytes is < 1024)
        {
            throw new NodeConfigException("node config: 'receiveBufferBytes' must be at least 1024");
        }
        if (MaxFrameSize is < FrameLayout.MinFrameSize or > FrameLayout.MaxFrameSize)
        {
            throw new NodeConfigException($"node config: 'maxFrameSize' must be between {FrameLayout.MinFrameSize} and {FrameLayout.MaxFrameSize}");
        }
        var driver = LinkDrivers.Default;
        if (LinkDriver is not null && !LinkDrivers.TryParse(LinkDriver, out driver))
        {
            throw new NodeConfigException($"node config: 'linkDriver' {Show(LinkDriver)} is not pcap or afpacket");
        }
        if (JobAssemblyDirectory is not null && (string.IsNullOrWhiteSpace(JobAssemblyDirectory) || !Path.IsPathRooted(JobAssemblyDirectory)))
        {
            throw new NodeConfigException($"node config: 'jobAssemblyDirectory' {Show(JobAssemblyDirectory)} must be an absolute path");
        }
        if (ScrubIntervalSeconds is < 0 or > MaxScrubIntervalSeconds)
        {
            throw new NodeConfigException($"node config: 'scrubIntervalSeconds' must be between 0 (no scrubbing) and {MaxScrubIntervalSeconds}");
        }
        if (ScrubBytesPerSecond is < MinScrubBytesPerSecond or > MaxScrubBytesPerSecond)
        {
            throw new NodeConfigException($"node config: 'scrubBytesPerSecond' must be between {MinScrubBytesPerSecond} and {MaxScrubBytesPerSecond}");
        }
        string data = Path.GetFullPath(DataDirectory);
        return new NodeSettings
        {
            Self = self,
            Torus = torus!,
            Interfaces = interfaces,
            DataDirectory = data,
            UplinkAddress = uplink,
            FrontEndPort = FrontEndPort,
            StreamPort = StreamPort,
            PeerAddresses = peers,
            WebPort = WebPort,
            CertsDirectory = string.IsNullOrWhiteSpace(CertsDirectory) ? null : Path.GetFullPath(CertsDirectory),
            FrontEnd = new FrontEndServerOptions
            {
                HandshakeTimeout = TimeSpan.FromMilliseconds(FrontEndHandshakeTimeoutMs),
                MaxRequestsInFlight = FrontEndMaxRequestsInFlight,
                MaxBytesInFlight = FrontEndMaxBytesInFlight,
                MaxBytesHeld = FrontEndMaxBytesHeld,
                MaxQueries = FrontEndMaxQueries,
                MaxQueriesPerClient = FrontEndMaxQueriesPerClient,
            },
            LogFile = LogFile == NodeLogging.StandardError ? LogFile : Path.GetFullPath(LogFile ?? Path.Combine(data, "node.log")),
            LogLevel = level,
            LogFormat = logFormat,
            Node = new NodeOptions
            {
                BeaconInterval = (long)(BeaconIntervalMs * NodeOptions.Millisecond),
                BeaconMisses = BeaconMisses,
                QueueCapacity = QueueCapacity,
                DataDirectory = data,
                IsolateServiceFaults = true,
            },
            StatusInterval = TimeSpan.FromMilliseconds(StatusIntervalMs),
            ReceiveBufferBytes = ReceiveBufferBytes,
            MaxFrameSize = MaxFrameSize,
            CarrierPollInterval = TimeSpan.FromMilliseconds(CarrierPollMs),
            LinkDriver = driver,
            JobAssemblyDirectory = JobAssemblyDirectory is null ? null : Path.GetFullPath(JobAssemblyDirectory),
            WarmUp = WarmUp,
            ChunkStore = new ChunkStoreOptions
            {
                KeepReplicas = true,
                ReReplicateAfter = (long)(ReReplicateAfterSeconds * 1e9),
                ReReplicateBytesPerSecond = ReReplicateBytesPerSecond,
                ScrubInterval = ScrubIntervalSeconds * 1000L * NodeOptions.Millisecond,
                ScrubBytesPerSecond = ScrubBytesPerSecond,
            },
        };
    }

    /// <summary>A year.</summary>
    private const int MaxScrubIntervalSeconds = 31_536_000;

    private const long MinScrubBytesPerSecond = 1_000;

    private const long MaxScrubBytesPerSecond = 100_000_000_000;

    /// <summary>A connection must be able to hold a whole message and the chunk part it carries.</summary>
    private const long MinBytesInFlight = 2L * MessageFraming.DefaultMaxMessageBytes;

    private static string Show(string? value) => value is null ? "nothing" : string.Create(CultureInfo.InvariantCulture, $"'{value}'");

    /// <summary>The stream settings checked: every server's address when <see cref="StreamPort"/> is set.</summary>
    private Dictionary<Coordinate, IPAddress> ValidateStreams(Torus torus, IPAddress? uplink)
    {
        var peers = new Dictionary<Coordinate, IPAddress>();
        if (StreamPort == 0)
        {
            return peers;
        }
        if (StreamPort is < 0 or > 65535)
        {
            throw new NodeConfigException($"node config: 'streamPort' {StreamPort} is not a TCP port");
        }
        if (uplink is null)
        {
            throw new NodeConfigException("node config: 'streamPort' needs 'uplinkAddress', the server's address on the switch network");
        }
        foreach (var (name, address) in PeerAddresses)
        {
            if (!Runtime.Topology.Coordinate.TryParse(name, out var c) || !torus.Contains(c))
            {
                throw new NodeConfigException($"node config: 'peerAddresses': {Show(name)} is not a server of {torus}");
            }
            if (!IPAddress.TryParse(address, out var ip))
            {
                throw new NodeConfigException($"node config: 'peerAddresses': {Show(address)} for {name} is not an IP address");
            }
            peers[c] = ip;
        }
        if (peers.Count != torus.Count)
        {
            throw new NodeConfigException($"node config: 'peerAddresses' names {peers.Count} of the {torus.Count} servers; 'streamPort' needs every server's address");
        }
        return peers;
    }
}

/// <summary>A validated <see cref="NodeConfig"/>.</summary>
public sealed record NodeSettings
{
    public required Coordinate Self { get; init; }

    public required Torus Torus { get; init; }

    /// <summary>Interface per port index; null where the port is not cabled.</summary>
    public required string?[] Interfaces { get; init; }

    public required string DataDirectory { get; init; }

    public IPAddress? UplinkAddress { get; init; }

    public int FrontEndPort { get; init; }

    /// <summary>See <see cref="NodeConfig.StreamPort"/>; 0: no streams.</summary>
    public int StreamPort { get; init; }

    /// <summary>Every server's uplink address (when <see cref="StreamPort"/> is set).</summary>
    public IReadOnlyDictionary<Coordinate, IPAddress> PeerAddresses { get; init; } = new Dictionary<Coordinate, IPAddress>();

    /// <summary>See <see cref="NodeConfig.WebPort"/>; 0: no web view.</summary>
    public int WebPort { get; init; }

    /// <summary>The credentials directory, as a full path; set whenever a front-end or streams run.</summary>
    public string? CertsDirectory { get; init; }

    /// <summary>
    /// The front-end's limits (the handshake timeout, requests and bytes in flight per connection, bytes held and
    /// queries running for all connections).
    /// </summary>
    public FrontEndServerOptions FrontEnd { get; init; } = new();

    /// <summary>A full path, or <see cref="NodeLogging.StandardError"/>.</summary>
    public required string LogFile { get; init; }

    public LogLevel LogLevel { get; init; } = LogLevel.Info;

    public NodeLogFormat LogFormat { get; init; } = NodeLogFormat.Text;

    /// <summary>See <see cref="NodeConfig.WarmUp"/>.</summary>
    public bool WarmUp { get; init; } = true;

    public required NodeOptions Node { get; init; }

    public TimeSpan StatusInterval { get; init; } = TimeSpan.FromSeconds(1);

    public int? ReceiveBufferBytes { get; init; }

    public int MaxFrameSize { get; init; } = FrameLayout.MaxFrameSize;

    public TimeSpan CarrierPollInterval { get; init; } = TimeSpan.FromMilliseconds(100);

    public LinkDriver LinkDriver { get; init; } = LinkDrivers.Default;

    /// <summary>Where job assemblies load from (full path); null: built-in jobs only.</summary>
    public string? JobAssemblyDirectory { get; init; }

    /// <summary>
    /// The chunk store's settings the config sets (re-replication's and the scrubber's); the rest take their defaults.
    /// </summary>
    public ChunkStoreOptions ChunkStore { get; init; } = new();
}

/// <summary>A node config that cannot be used; the message is one line naming the problem.</summary>
public sealed class NodeConfigException : Exception
{
    public NodeConfigException(string message)
        : base(message)
    {
    }

    public NodeConfigException()
    {
    }

    public NodeConfigException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

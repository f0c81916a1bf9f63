using System.Globalization;
using System.Net;
using System.Net.NetworkInformation;
using System.Text.Json;
using Camdoop.Cli.CommandLine;
using Camdoop.Hosting;
using Camdoop.Hosting.Logging;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Security;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `camdoop node --check-config`: everything a node needs before it starts, checked without starting it, so that an
/// operator finds a wrong field, file, interface or privilege before systemd restarts the node in a loop. The first
/// problem is a <see cref="CliException"/> of one line; all well, one line that sums up what was checked.
/// </summary>
internal static class NodeConfigCheck
{
    /// <summary>Group and other may do nothing with a private key: what `camdoop certs` writes (0600).</summary>
    private const UnixFileMode NotOwner = UnixFileMode.GroupRead | UnixFileMode.GroupWrite | UnixFileMode.GroupExecute |
                                          UnixFileMode.OtherRead | UnixFileMode.OtherWrite | UnixFileMode.OtherExecute;

    public static string Run(string path)
    {
        NodeSettings settings;
        try
        {
            var config = NodeConfig.Load(path);
            RequireKnownFields(path);
            settings = config.Validate();
        }
        catch (NodeConfigException e)
        {
            throw new CliException(e.Message);
        }
        var summary = new List<string> { $"node {settings.Self.Name} of {settings.Torus}" };
        RequireWritable("data directory", settings.DataDirectory);
        bool logsToFile = settings.LogFile != NodeLogging.StandardError;
        string? logDirectory = logsToFile ? Path.GetDirectoryName(settings.LogFile) : null;
        if (logDirectory is not null && logDirectory != settings.DataDirectory)
        {
            RequireWritable("log directory", logDirectory);
        }
        if (logsToFile && File.Exists(settings.LogFile))
        {
            // A log left by a run as another user (root, before the service had its own) stops the node at start.
            try
            {
                using var log = new FileStream(settings.LogFile, FileMode.Append, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                throw new CliException($"log file {settings.LogFile} is not writable by user {Environment.UserName}: {e.Message}");
            }
        }
        if (settings.JobAssemblyDirectory is { } jobs && !Directory.Exists(jobs))
        {
            throw new CliException($"job assembly directory {jobs} does not exist");
        }
        summary.Add(Certificates(settings));
        summary.Add(Interfaces(settings));
        if (settings.UplinkAddress is { } uplink && !IsLocal(uplink))
        {
            throw new CliException($"uplinkAddress {uplink} is not an address of this machine: the front-end and the streams listen there");
        }
        summary.Add(Privileges(settings));
        summary.Add($"data {settings.DataDirectory}");
        return "config OK: " + string.Join("; ", summary);
    }

    /// <summary>
    /// A misspelt field is ignored when the node reads its config, and its default taken in silence: here it is an
    /// error.
    /// </summary>
    private static void RequireKnownFields(string path)
    {
        var known = typeof(NodeConfig).GetProperties()
            .Where(p => p.CanWrite)
            .Select(p => NodeConfig.JsonOptions.PropertyNamingPolicy!.ConvertName(p.Name))
            .ToList();
        var options = new JsonDocumentOptions { CommentHandling = JsonCommentHandling.Skip, AllowTrailingCommas = true };
        using var document = JsonDocument.Parse(File.ReadAllText(path), options);
        if (document.RootElement.ValueKind != JsonValueKind.Object)
        {
            throw new CliException($"node config {path} is not a JSON object");
        }
        foreach (var field in document.RootElement.EnumerateObject())
        {
            if (!known.Contains(field.Name, StringComparer.Ordinal))
            {
                string? meant = known.Find(k => string.Equals(k, field.Name, StringComparison.OrdinalIgnoreCase));
                throw new CliException($"node config {path}: unknown field '{field.Name}'" + (meant is null ? "" : $", did you mean '{meant}'?"));
            }
        }
    }

    private static void RequireWritable(string what, string directory)
    {
        if (!Directory.Exists(directory))
        {
            throw new CliException($"{what} {directory} does not exist");
        }
        string probe = Path.Combine(directory, $".camdoop-check-{Environment.ProcessId}");
        try
        {
            using var file = new FileStream(probe, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1, FileOptions.DeleteOnClose);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new CliException($"{what} {directory} is not writable by user {Environment.UserName}: {e.Message}");
        }
    }

    /// <summary>
    /// The checks the node makes when it loads its credentials (the CA's signature, the validity period, the role, the
    /// coordinate), and those a client makes when it reaches the node (the uplink address named), and the key's mode.
    /// </summary>
    private static string Certificates(NodeSettings settings)
    {
        if (settings.CertsDirectory is not { } directory)
        {
            return "no certificates (no front-end, no streams)";
        }
        var role = CertificateRole.Node;
        foreach (string name in new[] { CertificateFiles.AuthorityCertificate, CertificateFiles.Certificate(role), CertificateFiles.Key(role) })
        {
            string file = Path.Combine(directory, name);
            if (!File.Exists(file))
            {
                throw new CliException($"certificates: {file} does not exist (make the directory with 'camdoop certs node --server {settings.Self.Name} --out {directory}')");
            }
            try
            {
                using var stream = File.OpenRead(file);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                throw new CliException($"certificates: cannot read {file}: {e.Message}");
            }
        }
        string key = Path.Combine(directory, CertificateFiles.Key(role));
        if (!OperatingSystem.IsWindows() && (File.GetUnixFileMode(key) & NotOwner) != 0)
        {
            string mode = Convert.ToString((int)File.GetUnixFileMode(key), 8).PadLeft(4, '0');
            throw new CliException($"certificates: {key} has mode {mode}: a private key must be readable by its owner only (chmod 600 {key})");
        }
        ClusterCredentials credentials;
        try
        {
            credentials = ClusterCredentials.Load(directory, role);
        }
        catch (CertificateException e)
        {
            throw new CliException($"certificates: {e.Message}");
        }
        using (credentials)
        {
            if (credentials.Identity.Name != settings.Self.Name)
            {
                throw new CliException($"certificates: the node certificate in {directory} is server {credentials.Identity.Name}'s, not {settings.Self.Name}'s");
            }
            if (settings.UplinkAddress is { } uplink && credentials.CheckServer(credentials.Certificate, uplink, out _) is { } problem)
            {
                throw new CliException($"certificates: {problem}: clients would refuse it (sign it again with 'camdoop certs node --address {uplink}')");
            }
            string until = credentials.Certificate.NotAfter.ToUniversalTime().ToString("yyyy-MM-dd", CultureInfo.InvariantCulture);
            return $"certificate {credentials.Identity} valid to {until}";
        }
    }

    /// <summary>Each configured port's interface exists, with an MTU that the configured frame size fits in.</summary>
    private static string Interfaces(NodeSettings settings)
    {
        int needed = LinkMtu.Needed(settings.MaxFrameSize);
        var ports = new List<string>();
        foreach (var port in Ports.All)
        {
            if (settings.Interfaces[(int)port] is not { } name)
            {
                continue;
            }
            string sys = Path.Combine("/sys/class/net", name);
            if (!Directory.Exists(sys))
            {
                throw new CliException($"port {port.Name()}: network interface {name} does not exist");
            }
            string mtuFile = Path.Combine(sys, "mtu");
            if (File.Exists(mtuFile) && int.TryParse(File.ReadAllText(mtuFile).Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out int mtu) && !LinkMtu.Fits(mtu, settings.MaxFrameSize))
            {
                throw new CliException($"port {port.Name()}: interface {name} has MTU {mtu}, but {settings.MaxFrameSize}-byte frames need MTU {needed} or more " +
                                       $"(ip link set dev {name} mtu {needed}, or a smaller 'maxFrameSize')");
            }
            ports.Add($"{port.Name()} {name}");
        }
        return ports.Count == 0 ? "no ports" : $"ports {string.Join(", ", ports)}";
    }

    private static bool IsLocal(IPAddress address) =>
        NetworkInterface.GetAllNetworkInterfaces()
            .SelectMany(i => i.GetIPProperties().UnicastAddresses)
            .Any(a => a.Address.Equals(address));

    /// <summary>Raw Ethernet sockets need CAP_NET_RAW (root has it unless it was taken away); without ports, nothing.</summary>
    private static string Privileges(NodeSettings settings)
    {
        if (settings.Interfaces.All(i => i is null))
        {
            return "no privileges needed";
        }
        if (LinuxCapabilities.Effective() is not { } mask)
        {
            throw new CliException("cannot read this process's capabilities from /proc/self/status: raw Ethernet links run on Linux only");
        }
        if (!LinuxCapabilities.Has(mask, LinuxCapabilities.NetRaw))
        {
            throw new CliException($"raw Ethernet sockets need root or CAP_NET_RAW, and this process has neither (CapEff {mask:x16}; " +
                                   "the systemd unit grants it with AmbientCapabilities=CAP_NET_RAW)");
        }
        return LinuxCapabilities.Has(mask, LinuxCapabilities.NetAdmin) ? "CAP_NET_RAW, CAP_NET_ADMIN" : "CAP_NET_RAW (no CAP_NET_ADMIN: socket buffers stay at the kernel's limit)";
    }
}

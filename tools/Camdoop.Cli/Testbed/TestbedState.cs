using System.Text.Json;
using Camdoop.Hosting;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// What `testbed up` made, so that `status`, `down` and the client commands find it again: the layout (prefix,
/// subnet, torus), the data root, the front-end address and one entry per server with its node process id.
/// Kept in /run/camdoop (a tmpfs, like the namespaces it describes: both vanish on reboot).
/// </summary>
public sealed record TestbedState
{
    public const string Directory = "/run/camdoop";

    public const string DefaultPrefix = "cdb";

    /// <summary>The folder of the data root every node of the testbed loads job assemblies from.</summary>
    public const string JobAssembliesFolder = "job-assemblies";

    public required string Prefix { get; init; }

    public required int Subnet { get; init; }

    public required string Torus { get; init; }

    public required string DataRoot { get; init; }

    /// <summary>"address:port" of the default front-end (server 0,0,0).</summary>
    public required string FrontEnd { get; init; }

    public int FrontEndPort { get; init; }

    /// <summary>Every server's web view port; 0: no web view (or a state written before it existed).</summary>
    public int WebPort { get; init; }

    /// <summary>The web view of the default front-end's server (0,0,0), or null.</summary>
    public string? Web => WebPort == 0 ? null : WebUrl(Servers[0]);

    /// <summary>The URL of <paramref name="server"/>'s web view (when <see cref="WebPort"/> is not 0).</summary>
    public string WebUrl(TestbedServer server) =>
        string.Create(System.Globalization.CultureInfo.InvariantCulture, $"https://{server.Address}:{WebPort}/");

    /// <summary>The cluster key every node's front-end checks clients against (mode 0600, beside this state file).</summary>
    public string? KeyFile { get; init; }

    public string? LinkRate { get; init; }

    /// <summary>"pcap" or "afpacket"; null in a state written before the choice existed (afpacket).</summary>
    public string? LinkDriver { get; init; }

    /// <summary>Where the testbed's nodes load job assemblies from; null in a state written before it existed.</summary>
    public string? JobAssemblyDirectory { get; init; }

    public DateTime CreatedUtc { get; init; }

    public required IReadOnlyList<TestbedServer> Servers { get; init; }

    public TestbedLayout Layout() => new(Prefix, Runtime.Topology.Torus.Parse(Torus), Subnet);

    public static string PathFor(string prefix) => System.IO.Path.Combine(Directory, $"testbed-{prefix}.json");

    public static string KeyPathFor(string prefix) => System.IO.Path.Combine(Directory, $"testbed-{prefix}.key");

    /// <summary>The testbed, of any prefix, one of whose servers' front-ends is <paramref name="address"/> ("host:port"); null if none.</summary>
    public static TestbedState? FindByFrontEnd(string address)
    {
        ArgumentNullException.ThrowIfNull(address);
        if (!System.IO.Directory.Exists(Directory))
        {
            return null;
        }
        foreach (string path in System.IO.Directory.EnumerateFiles(Directory, "testbed-*.json"))
        {
            string prefix = System.IO.Path.GetFileNameWithoutExtension(path)["testbed-".Length..];
            if (TryLoad(prefix) is { } state && state.Servers.Any(s => $"{s.Address}:{state.FrontEndPort}" == address))
            {
                return state;
            }
        }
        return null;
    }

    public static TestbedState? TryLoad(string prefix)
    {
        string path = PathFor(prefix);
        if (!File.Exists(path))
        {
            return null;
        }
        try
        {
            return JsonSerializer.Deserialize<TestbedState>(File.ReadAllText(path), NodeConfig.JsonOptions);
        }
        catch (JsonException)
        {
            return null;
        }
        catch (FileNotFoundException)
        {
            // Removed since the check by a `testbed down` of its own: FindByFrontEnd reads every testbed's state.
            return null;
        }
    }

    public void Save()
    {
        System.IO.Directory.CreateDirectory(Directory);
        string path = PathFor(Prefix);
        File.WriteAllText(path + ".tmp", JsonSerializer.Serialize(this, NodeConfig.JsonOptions));
        File.Move(path + ".tmp", path, overwrite: true);
    }

    /// <summary>Removes the state file and the testbed's key.</summary>
    public static void Delete(string prefix)
    {
        foreach (string path in new[] { PathFor(prefix), KeyPathFor(prefix) })
        {
            if (File.Exists(path))
            {
                File.Delete(path);
            }
        }
    }
}

/// <summary>One server of the testbed.</summary>
public sealed record TestbedServer
{
    /// <summary>"x,y,z".</summary>
    public required string Coordinate { get; init; }

    public required string Namespace { get; init; }

    public required string Address { get; init; }

    public required string Config { get; init; }

    public required string DataDirectory { get; init; }

    public int Pid { get; init; }

    public Coordinate Parsed => Runtime.Topology.Coordinate.TryParse(Coordinate, out var c) ? c : default;

    public string StatusPath => Path.Combine(DataDirectory, "status.json");

    public string OutputPath => Path.Combine(DataDirectory, "stdout.log");
}

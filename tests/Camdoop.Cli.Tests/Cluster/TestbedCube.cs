using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.FrontEnd.Auth;
using Camdoop.Hosting;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// A 3x3x3 emulated testbed brought up with the real CLI (`camdoop testbed up`), with a generated text corpus put
/// into its chunk store (`camdoop put`). Server (1,1,1)'s links get a tiny kernel receive buffer, so that the kernel
/// drops frames there and the transports must recover them. Disposing runs `camdoop testbed down` and fails if any
/// namespace of the testbed is left behind.
/// </summary>
public sealed class TestbedCube : IDisposable
{
    public const string Prefix = "cde";
    public const string LossyServer = "1,1,1";

    /// <summary>About two jumbo frames: bursts towards (1,1,1) overflow it.</summary>
    public const int TinyReceiveBuffer = 24 * 1024;

    public TestbedCube()
    {
        if (!Camdoop.Cli.Testbed.SystemCommand.IsRoot)
        {
            return; // The tests skip themselves.
        }
        CliRunner.Run("testbed", "down", "--prefix", Prefix);
        Directory.CreateDirectory(WorkDirectory);
        var up = CliRunner.Run("testbed", "up", "--torus", "3x3x3", "--prefix", Prefix, "--subnet", "205", "--json",
            "--receive-buffer", $"{TinyReceiveBuffer}", "--receive-buffer-at", LossyServer);
        if (up.ExitCode != 0)
        {
            CliRunner.Run("testbed", "down", "--prefix", Prefix);
            throw new InvalidOperationException($"testbed up failed: {up}");
        }
        using (var json = JsonDocument.Parse(up.Stdout))
        {
            FrontEnd = json.RootElement.GetProperty("frontend").GetString()!;
        }
        State = TestbedState.TryLoad(Prefix)!;

        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 60_000, Seed = 11 });
        Corpus = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
        CorpusPath = Path.Combine(WorkDirectory, "corpus.txt");
        File.WriteAllBytes(CorpusPath, Corpus);
        var put = CliRunner.Run("put", CorpusPath, "--name", "corpus", "--frontend", FrontEnd);
        if (put.ExitCode != 0)
        {
            Dispose();
            throw new InvalidOperationException($"put failed: {put}");
        }
    }

    public string FrontEnd { get; } = "";

    public TestbedState State { get; } = null!;

    /// <summary>The testbed's cluster key, for clients run in-process (the CLI finds it by itself).</summary>
    public ClusterKey Key => ClusterKey.Load(State.KeyFile!);

    public byte[] Corpus { get; } = [];

    public string CorpusPath { get; } = "";

    public string WorkDirectory { get; } = Path.Combine(Path.GetTempPath(), $"camdoop-e2e-{Environment.ProcessId}");

    public TestbedServer Server(string coordinate) => State.Servers.Single(s => s.Coordinate == coordinate);

    public NodeStatus Status(string coordinate) =>
        NodeStatus.TryRead(Server(coordinate).StatusPath) ?? throw new InvalidOperationException($"no status of {coordinate}");

    /// <summary>A counter summed over every server's status file.</summary>
    public long Sum(string group, string counter) =>
        State.Servers.Sum(s => NodeStatus.TryRead(s.StatusPath)?.Counters.GetValueOrDefault(group)?.GetValueOrDefault(counter) ?? 0);

    public CliResult Cli(params string[] args) => CliRunner.Run([.. args, "--frontend", FrontEnd]);

    public void Dispose()
    {
        if (!Camdoop.Cli.Testbed.SystemCommand.IsRoot)
        {
            return;
        }
        var down = CliRunner.Run("testbed", "down", "--prefix", Prefix);
        if (Directory.Exists(WorkDirectory))
        {
            Directory.Delete(WorkDirectory, recursive: true);
        }
        var left = TestbedNetwork.ListNamespaces().Where(ns => ns.StartsWith(Prefix + "-", StringComparison.Ordinal)).ToList();
        if (down.ExitCode != 0 || left.Count > 0)
        {
            throw new InvalidOperationException($"testbed down left {left.Count} namespaces behind: {down}");
        }
    }
}

using System.Globalization;
using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Hosting;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;

namespace Camdoop.Cli.Tests.Support;

/// <summary>
/// An emulated testbed brought up with the real CLI (`camdoop testbed up`) under a namespace prefix and subnet of its
/// own, so that test classes with different cubes can run side by side. Disposing runs `camdoop testbed down` and
/// fails if any namespace of the testbed is left behind. Without root it brings nothing up: the tests skip
/// themselves. Its nodes start without their warm-up jobs (`--no-warm-up`, as the tests' other testbeds do) unless a
/// test measures rates from the first job on: the warm-up is a second of CPU per node, half of a 27-node cube's start
/// on two cores, and NodeWarmUpTests test it.
/// </summary>
public abstract class EmulatedCube : IDisposable
{
    private readonly string _prefix;

    protected EmulatedCube(string prefix, int subnet, params string[] upOptions)
        : this(prefix, subnet, warmUp: false, upOptions)
    {
    }

    /// <param name="prefix">The testbed's namespace prefix.</param>
    /// <param name="subnet">The second octet of its switch network.</param>
    /// <param name="warmUp">Whether the nodes run their warm-up jobs first: for tests that measure rates from the first job.</param>
    /// <param name="upOptions">More `testbed up` options.</param>
    protected EmulatedCube(string prefix, int subnet, bool warmUp, params string[] upOptions)
    {
        _prefix = prefix;
        WorkDirectory = Path.Combine(Path.GetTempPath(), $"camdoop-{prefix}-{Environment.ProcessId}");
        if (!SystemCommand.IsRoot)
        {
            return;
        }
        CliRunner.Run("testbed", "down", "--prefix", prefix);
        Directory.CreateDirectory(WorkDirectory);
        var up = CliRunner.Run(["testbed", "up", "--prefix", prefix, "--subnet", subnet.ToString(CultureInfo.InvariantCulture), "--json",
            .. warmUp ? Array.Empty<string>() : ["--no-warm-up"], .. upOptions]);
        if (up.ExitCode != 0)
        {
            CliRunner.Run("testbed", "down", "--prefix", prefix);
            throw new InvalidOperationException($"testbed up failed: {up}");
        }
        using (var json = JsonDocument.Parse(up.Stdout))
        {
            FrontEnd = json.RootElement.GetProperty("frontend").GetString()!;
        }
        State = TestbedState.TryLoad(prefix)!;
        IsUp = true;
    }

    /// <summary>False without root: nothing was brought up.</summary>
    public bool IsUp { get; }

    /// <summary>The front-end the cube's commands go to: the testbed's, unless <see cref="UseFrontEnd"/> named another.</summary>
    public string FrontEnd { get; private set; } = "";

    /// <summary>Sends the cube's commands to the front-end at <paramref name="address"/> (HOST:PORT) from now on.</summary>
    public void UseFrontEnd(string address) => FrontEnd = address;

    public TestbedState State { get; } = null!;

    /// <summary>A directory for the test's own files (inputs, fetched outputs), removed with the cube.</summary>
    public string WorkDirectory { get; }

    /// <summary>The testbed's client credentials, for clients run in-process (the CLI finds them by itself).</summary>
    public Camdoop.Runtime.Security.ClusterCredentials Key => Camdoop.Runtime.Security.ClusterCredentials.Load(State.ClientCerts!, Camdoop.Runtime.Security.CertificateRole.Client);

    public CliResult Cli(params string[] args) => CliRunner.Run([.. args, "--frontend", FrontEnd]);

    public TestbedServer Server(string coordinate) => State.Servers.Single(s => s.Coordinate == coordinate);

    public NodeStatus NodeStatusOf(TestbedServer server) =>
        NodeStatus.TryRead(server.StatusPath) ?? throw new InvalidOperationException($"no status of {server.Coordinate}");

    public NodeStatus NodeStatusOf(string coordinate) => NodeStatusOf(Server(coordinate));

    /// <summary>A counter summed over every server's status file.</summary>
    public long Sum(string group, string counter) =>
        State.Servers.Sum(s => NodeStatus.TryRead(s.StatusPath)?.Counters.GetValueOrDefault(group)?.GetValueOrDefault(counter) ?? 0);

    /// <summary>Writes a file in <see cref="WorkDirectory"/> and returns its path.</summary>
    public string Write(string name, byte[] bytes)
    {
        string path = Path.Combine(WorkDirectory, name);
        File.WriteAllBytes(path, bytes);
        return path;
    }

    /// <summary>Stores <paramref name="bytes"/> as dataset <paramref name="name"/> (`camdoop put`).</summary>
    public void Put(string name, byte[] bytes, params string[] options)
    {
        var put = Cli(["put", Write(name, bytes), "--name", name, .. options]);
        Assert.True(put.ExitCode == 0, put.ToString());
    }

    /// <summary>Submits without waiting; returns the job id.</summary>
    public string Submit(params string[] args)
    {
        var submit = Cli(["submit", .. args, "--json"]);
        Assert.True(submit.ExitCode == 0, submit.ToString());
        using var json = JsonDocument.Parse(submit.Stdout);
        return json.RootElement.GetProperty("jobId").GetString()!;
    }

    /// <summary>Checks a finished job's output (`cat`) against the single-process reference.</summary>
    public void AssertOutputIsTheReference(string jobId, IMapReduceJob job, byte[] input, int reducers)
    {
        var reference = ReferenceMapReduce.Run(job, [input], reducers);
        AssertOutputIs(jobId, Enumerable.Range(0, reducers).SelectMany(reference.Format).ToArray(), $"{job.GetType().Name}, R={reducers}");
    }

    /// <summary>Checks a finished job's output (`cat`) byte for byte.</summary>
    protected void AssertOutputIs(string jobId, byte[] expected, string what)
    {
        string outPath = Path.Combine(WorkDirectory, $"{jobId}.out");
        var cat = Cli("cat", jobId, "--out", outPath);
        Assert.True(cat.ExitCode == 0, cat.ToString());
        var actual = File.ReadAllBytes(outPath);
        File.Delete(outPath);
        Assert.True(expected.AsSpan().SequenceEqual(actual), $"job {jobId} ({what}) output differs from the reference");
    }

    /// <summary>Lines of every node's log that contain <paramref name="text"/>.</summary>
    public IEnumerable<string> LogLines(string text) => State.Servers
        .Select(s => Path.Combine(s.DataDirectory, "node.log"))
        .Where(File.Exists)
        .SelectMany(path => File.ReadLines(path).Where(l => l.Contains(text, StringComparison.Ordinal)).ToList());

    public static void WaitUntil(Func<bool> condition, string failure, int seconds = 60)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!condition())
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(seconds), failure);
            Thread.Sleep(100);
        }
    }

    /// <summary>
    /// Runs a derived cube's setup (datasets, jobs) and tears the testbed down when it fails: xUnit never disposes a
    /// fixture whose constructor threw.
    /// </summary>
    protected void SetUp(Action setup)
    {
        if (!IsUp)
        {
            return;
        }
        try
        {
            setup();
        }
        catch
        {
            Dispose();
            throw;
        }
    }

    public void Dispose()
    {
        if (!IsUp)
        {
            return;
        }
        // CAMDOOP_TEST_KEEP_DATA=1 keeps the servers' data directories and logs for a look after a failed test.
        var down = Environment.GetEnvironmentVariable("CAMDOOP_TEST_KEEP_DATA") == "1"
            ? CliRunner.Run("testbed", "down", "--prefix", _prefix, "--keep-data")
            : CliRunner.Run("testbed", "down", "--prefix", _prefix);
        if (Directory.Exists(WorkDirectory))
        {
            Directory.Delete(WorkDirectory, recursive: true);
        }
        var left = TestbedNetwork.ListNamespaces().Where(ns => ns.StartsWith(_prefix + "-", StringComparison.Ordinal)).ToList();
        if (down.ExitCode != 0 || left.Count > 0)
        {
            throw new InvalidOperationException($"testbed down left {left.Count} namespaces behind: {down}");
        }
    }
}

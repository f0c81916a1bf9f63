using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// Failures on the real cube: a node process killed (SIGKILL) and a cable pulled in the middle of a job's shuffle on
/// a 3x3x3 testbed, through the CLI as an operator would. The output equals the single-process reference every
/// time, `status` says what failed and how the job recovered, a job submitted while a server is down runs on the
/// live ones, and `testbed down` leaves nothing behind. Each test gets a testbed of its own: a failure is for good.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class FailureTestbedTests(ITestOutputHelper output)
{
    private const string Prefix = "cdr";

    /// <summary>The front-end every job goes through: it coordinates them, so it is never the one that fails.</summary>
    private const string FrontEndServer = "0,0,0";

    [RootTheory]
    [InlineData(1)]
    [InlineData(27)]
    public void AServerKilledMidShuffleLeavesTheOutputExact(int reducers)
    {
        using var cube = new FailureCube(output);
        // Slow links (whose short queues drop frames, which the transport sends again) stretch the shuffle to 7 s or
        // more, so that the failure, detected after 3 s of silence, lands in it.
        cube.ShapeLinks(reducers == 1 ? "2mbit" : "300kbit");
        string jobId = cube.SubmitAndWaitForShuffle(reducers);
        // The victim: the server (other than the front-end) that ran the most map tasks, as its disk shows.
        var (victim, mapTasks) = cube.MapTasksByServer(jobId).Where(m => m.Server != FrontEndServer).MaxBy(m => m.MapTasks);
        Assert.True(mapTasks > 0, "no server but the front-end ran a map task");
        var kill = CliRunner.Run("testbed", "kill", victim, "--prefix", Prefix);
        Assert.True(kill.ExitCode == 0, kill.ToString());
        long killedAt = long.Parse(kill.Stdout.Split(" at ")[1].Split(' ')[0], CultureInfo.InvariantCulture);

        using var status = cube.WaitForJob(jobId);
        cube.ShapeLinks(null); // reading the output back needs no slow links
        var root = status.RootElement;
        var failure = Assert.Single(root.GetProperty("failures").EnumerateArray());
        Assert.Equal(victim, failure.GetProperty("server").GetString());
        Assert.Equal("shuffling", failure.GetProperty("during").GetString());
        var recovery = root.GetProperty("recovery");
        Assert.Equal((long)mapTasks, recovery.GetProperty("mapTasksRerun").GetInt64()); // each of the killed server's map tasks ran again, once
        cube.AssertOutputIsTheReference(jobId, reducers);
        long detection = failure.GetProperty("detectedAtUnixMs").GetInt64() - killedAt;
        output.WriteLine($"R={reducers}: {victim} killed, detected after {detection} ms; shuffle and reduce {root.GetProperty("shuffleReduceSeconds").GetDouble():0.000} s; " +
            $"{recovery.GetProperty("resentBytes").GetInt64()} bytes sent again, {recovery.GetProperty("verticesAdopted").GetInt64()} vertices taken over");
        Assert.InRange(detection, 0, 10_000);

        // The cube is one server short now: a new job runs on the other 26 and reads the dead server's chunks from
        // their other replicas.
        var again = cube.Cli("submit", "--job", "sort", "--input", "records", "--reducers", $"{reducers}", "--wait", "--json");
        Assert.True(again.ExitCode == 0, again.ToString());
        using var second = JsonDocument.Parse(again.Stdout);
        Assert.Equal("done", second.RootElement.GetProperty("state").GetString());
        Assert.Equal(26, second.RootElement.GetProperty("servers").GetInt64());
        Assert.Equal(26, second.RootElement.GetProperty("mapsDone").GetInt64());
        Assert.Equal(27, second.RootElement.GetProperty("mapTasks").GetInt64());
        cube.AssertOutputIsTheReference(second.RootElement.GetProperty("jobId").GetString()!, reducers);
    }

    /// <summary>
    /// The server a job was submitted to, which coordinates it, killed mid-shuffle: the next owner of the job's
    /// control key takes over from its copy of the job's state, the job finishes with the exact output, a
    /// `status --wait` that was asking the dead front-end ends with one line naming another, and any other front-end
    /// reports the job (coordinated elsewhere, the dead server lost while shuffling) and prints its output.
    /// </summary>
    [RootFact]
    public void TheCoordinatorKilledMidShuffleHandsTheJobOn()
    {
        using var cube = new FailureCube(output);
        cube.ShapeLinks("300kbit"); // a shuffle of 7 s or more: the coordinator's loss, detected after 3 s, lands in it
        string jobId = cube.SubmitAndWaitForShuffle(27);
        using (var first = cube.Status(jobId))
        {
            Assert.Equal(FrontEndServer, first.RootElement.GetProperty("coordinator").GetString());
        }
        string firstFrontEnd = cube.FrontEnd;
        // The status file is a snapshot taken every second: count the connections from one taken after the last
        // client above had connected, or that client's connection is later mistaken for the waiting one's.
        var asked = DateTime.UtcNow;
        EmulatedCube.WaitUntil(() => cube.NodeStatusOf(FrontEndServer).UpdatedUtc > asked, "the front-end's status file was not written again");
        long connected = cube.NodeStatusOf(FrontEndServer).Counters["frontEnd"]["authenticated"];
        var waiting = Task.Run(() => CliRunner.Run(TimeSpan.FromMinutes(2), "status", jobId, "--wait", "--frontend", firstFrontEnd));
        // The kill must find the client waiting on its connection, not still starting or shaking hands.
        var patience = Stopwatch.StartNew();
        while (cube.NodeStatusOf(FrontEndServer).Counters["frontEnd"]["authenticated"] <= connected && patience.Elapsed < TimeSpan.FromSeconds(30) && !waiting.IsCompleted)
        {
            Thread.Sleep(100);
        }
        Thread.Sleep(500);
        var kill = CliRunner.Run("testbed", "kill", FrontEndServer, "--prefix", Prefix);
        Assert.True(kill.ExitCode == 0, kill.ToString());
        long killedAt = long.Parse(kill.Stdout.Split(" at ")[1].Split(' ')[0], CultureInfo.InvariantCulture);

        var lost = waiting.GetAwaiter().GetResult();
        Assert.True(lost.ExitCode == 1, lost.ToString());
        // Its progress bar, then one line.
        string line = Assert.Single(lost.Stderr.Split('\n'), l => l.StartsWith("camdoop:", StringComparison.Ordinal));
        Assert.Contains($"job {jobId} goes on without it: ask another front-end with 'camdoop status --wait {jobId} --frontend ", line, StringComparison.Ordinal);
        string other = line.Split("--frontend ")[1].TrimEnd('\'');
        Assert.NotEqual(firstFrontEnd, other);

        cube.UseFrontEnd(other);
        using var status = cube.WaitForJob(jobId);
        cube.ShapeLinks(null);
        var root = status.RootElement;
        string coordinator = root.GetProperty("coordinator").GetString()!;
        Assert.NotEqual(FrontEndServer, coordinator);
        var failure = Assert.Single(root.GetProperty("failures").EnumerateArray());
        Assert.Equal(FrontEndServer, failure.GetProperty("server").GetString());
        Assert.Equal("shuffling", failure.GetProperty("during").GetString());
        cube.AssertOutputIsTheReference(jobId, 27);
        long detection = failure.GetProperty("detectedAtUnixMs").GetInt64() - killedAt;
        // One keeper took the job over from the killed coordinator. On a loaded machine a server that took a job over
        // can itself be silent long enough to be taken for lost, and hand the job on again: the job's coordinator at
        // the end is then the last of them.
        var takeover = Assert.Single(cube.LogLines($"job {jobId}: its coordinator {FrontEndServer} is lost; "));
        long takenOverAt = DateTimeOffset.Parse(takeover.Split(' ')[0], CultureInfo.InvariantCulture).ToUnixTimeMilliseconds();
        output.WriteLine($"coordinator {FrontEndServer} killed, detected after {detection} ms, taken over after {takenOverAt - killedAt} ms, now coordinated by {coordinator}; " +
            $"shuffle and reduce {root.GetProperty("shuffleReduceSeconds").GetDouble():0.000} s");
        long takeovers = cube.Sum("jobControl", "takeovers");
        Assert.True(takeovers == 1 || cube.LogLines($"job {jobId}: its coordinator ").Count() == takeovers,
            $"{takeovers} takeovers, not all of them of job {jobId}");

        // The job is the cube's, not its first front-end's: it is listed through the new one. On a loaded machine its
        // coordinator may miss the listing's deadline: then the listing names it, and is asked for again.
        EmulatedCube.WaitUntil(() =>
        {
            var jobs = cube.Cli("jobs", "--json");
            Assert.True(jobs.ExitCode == 0, jobs.ToString());
            using var listing = JsonDocument.Parse(jobs.Stdout);
            if (listing.RootElement.GetProperty("jobs").EnumerateArray().Any(j => j.GetProperty("jobId").GetString() == jobId))
            {
                return true;
            }
            var unanswered = listing.RootElement.GetProperty("unanswered").EnumerateArray().Select(u => u.GetString()).ToList();
            Assert.True(unanswered.Contains(coordinator), $"job {jobId} is not listed, yet its coordinator {coordinator} answered: {jobs.Stdout}");
            output.WriteLine($"the listing was missing {string.Join(' ', unanswered)}; asked again");
            return false;
        }, $"job {jobId} was never listed");
    }

    /// <summary>
    /// With replicated output, the root itself killed mid-shuffle: its reduce task goes on at the server holding the
    /// replica, from the replica's last key, and the output is still exact.
    /// </summary>
    [RootFact]
    public void ARootKilledMidShuffleGoesOnFromItsReplica()
    {
        using var cube = new FailureCube(output);
        // At 10 Mbit/s the root's replica stream (the whole output, on one link) takes about four seconds.
        cube.ShapeLinks("10mbit");
        string jobId;
        string rootServer;
        while (true)
        {
            jobId = cube.SubmitAndWaitForShuffle(1, "--replicate-output");
            var torus = new Camdoop.Runtime.Topology.Torus(3, 3, 3);
            var root = new Camdoop.MapReduce.Service.JobPlacement(torus, ulong.Parse(jobId, NumberStyles.HexNumber, CultureInfo.InvariantCulture), 1).Root(0);
            rootServer = $"{root.X},{root.Y},{root.Z}";
            if (rootServer != FrontEndServer)
            {
                break;
            }
            cube.WaitForJob(jobId).Dispose(); // the front-end coordinates: this job's root cannot be the one that fails
        }
        Thread.Sleep(1500);
        Assert.Equal(0, CliRunner.Run("testbed", "kill", rootServer, "--prefix", Prefix).ExitCode);

        using var status = cube.WaitForJob(jobId);
        cube.ShapeLinks(null);
        var failure = Assert.Single(status.RootElement.GetProperty("failures").EnumerateArray());
        Assert.Equal(rootServer, failure.GetProperty("server").GetString());
        cube.AssertOutputIsTheReference(jobId, 1);
        var resumed = cube.LogLines($"job {jobId}: reduce task 0 goes on from its output's replica: ").ToList();
        var line = Assert.Single(resumed);
        long held = long.Parse(line.Split("replica: ")[1].Split(' ')[0], CultureInfo.InvariantCulture);
        output.WriteLine(line);
        Assert.True(held > 0, $"the replica held nothing when the root was killed: {line}");
    }

    /// <summary>
    /// A server that stops answering (SIGSTOP) for longer than detection and then carries on: the job goes on
    /// without it, and when it is back it is told to leave the job, so it drops its part (its map outputs go).
    /// </summary>
    [RootFact]
    public void AServerSilentForSecondsIsLeftBehindAndToldToLeave()
    {
        using var cube = new FailureCube(output);
        cube.ShapeLinks("2mbit");
        string jobId = cube.SubmitAndWaitForShuffle(1);
        var (victim, mapTasks) = cube.MapTasksByServer(jobId).Where(m => m.Server != FrontEndServer).MaxBy(m => m.MapTasks);
        Assert.True(mapTasks > 0, "no server but the front-end ran a map task");
        int pid = cube.Pid(victim);
        Signal("STOP", pid);
        Thread.Sleep(5000); // longer than the 3 s after which its neighbours declare it lost
        Signal("CONT", pid);

        using var status = cube.WaitForJob(jobId);
        cube.ShapeLinks(null);
        Assert.Equal(victim, Assert.Single(status.RootElement.GetProperty("failures").EnumerateArray()).GetProperty("server").GetString());
        cube.AssertOutputIsTheReference(jobId, 1);
        EmulatedCube.WaitUntil(() => cube.MapTasksByServer(jobId).Single(m => m.Server == victim).MapTasks == 0,
            $"{victim} came back but kept its part of the job (its map outputs are still there)");
    }

    private static void Signal(string signal, int pid)
    {
        using var kill = System.Diagnostics.Process.Start("kill", [$"-{signal}", pid.ToString(CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }

    [RootFact]
    public void ACablePulledMidShuffleIsRoutedAroundAndTheOutputIsExact()
    {
        using var cube = new FailureCube(output);
        cube.ShapeLinks("5mbit");
        string jobId = cube.SubmitAndWaitForShuffle(1);
        Thread.Sleep(500);
        var pull = CliRunner.Run("testbed", "link", "1,1,1", "+X", "down", "--prefix", Prefix);
        Assert.True(pull.ExitCode == 0, pull.ToString());
        Assert.Equal("link 1,1,1:+X - 2,1,1:-X down", pull.Stdout.Trim());

        using var status = cube.WaitForJob(jobId);
        cube.ShapeLinks(null);
        Assert.Empty(status.RootElement.GetProperty("failures").EnumerateArray()); // every server stayed reachable
        cube.AssertOutputIsTheReference(jobId, 1);
        Assert.False(cube.NodeStatusOf("1,1,1").Links.Single(l => l.Port == "+X").Up, "the pulled cable is still up");

        var plug = CliRunner.Run("testbed", "link", "1,1,1", "+X", "up", "--prefix", Prefix);
        Assert.True(plug.ExitCode == 0, plug.ToString());
        EmulatedCube.WaitUntil(() => cube.NodeStatusOf("1,1,1").Links.Single(l => l.Port == "+X").Up, "the replugged cable never came back up");
    }

    [RootFact]
    public void KillAndLinkRefuseBadArgumentsInOneLine()
    {
        foreach (var (args, expected) in new[]
        {
            (new[] { "testbed", "kill", "9,9,9", "--prefix", "cdq" }, "no testbed 'cdq' is up"),
            (new[] { "testbed", "kill", "one", "--prefix", Prefix }, "'one' is not a server X,Y,Z"),
            (new[] { "testbed", "link", "1,1,1", "+W", "down" }, "'+W' is not a port"),
            (new[] { "testbed", "link", "1,1,1", "+X", "sideways" }, "the state must be down or up"),
        })
        {
            var result = CliRunner.Run(args);
            Assert.NotEqual(0, result.ExitCode);
            Assert.Contains(expected, result.Stderr, StringComparison.Ordinal);
            Assert.Single(result.Stderr.Trim().Split('\n'));
        }
    }

    /// <summary>A fresh 3x3x3 testbed with 5 MB of sort records stored.</summary>
    private sealed class FailureCube : EmulatedCube
    {
        private readonly ITestOutputHelper _output;

        public FailureCube(ITestOutputHelper output)
            : base(Prefix, 206)
        {
            _output = output;
            var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Sort, Servers = 27, BytesPerServer = 200_000, Seed = 5 });
            Records = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
            SetUp(() =>
            {
                Assert.Equal(FrontEndServer, State.Servers.Single(s => s.Address == FrontEnd.Split(':')[0]).Coordinate);
                Put("records", Records, "--format", "records100");
            });
        }

        public byte[] Records { get; }

        public int Pid(string coordinate) => Server(coordinate).Pid;

        /// <summary>Shapes every torus link to <paramref name="rate"/> (null: unshaped again).</summary>
        public void ShapeLinks(string? rate) =>
            TestbedNetwork.Shape(State.Layout(), new LinkShaping(rate, 0, 0));

        /// <summary>How many map tasks of job <paramref name="jobId"/> each server ran: their output directories on its disk.</summary>
        public IEnumerable<(string Server, int MapTasks)> MapTasksByServer(string jobId) => State.Servers.Select(s =>
        {
            string directory = Path.Combine(s.DataDirectory, "jobs", jobId);
            return (s.Coordinate, Directory.Exists(directory) ? Directory.GetDirectories(directory, "map-*").Length : 0);
        });

        /// <summary>Submits the sort job and returns its id once every server has mapped and the shuffle has started.</summary>
        public string SubmitAndWaitForShuffle(int reducers, params string[] options)
        {
            var submit = Cli(["submit", "--job", "sort", "--input", "records", "--reducers", $"{reducers}", "--json", .. options]);
            Assert.True(submit.ExitCode == 0, submit.ToString());
            string jobId = JsonDocument.Parse(submit.Stdout).RootElement.GetProperty("jobId").GetString()!;
            // Asked in-process, every few milliseconds: a CLI process per question would start too slowly.
            using var client = Camdoop.FrontEnd.FrontEndClient.Connect(FrontEnd, Key);
            var clock = System.Diagnostics.Stopwatch.StartNew();
            while (true)
            {
                string state = client.Call(new Camdoop.FrontEnd.Wire.JobStatusRequest { JobId = jobId }).State;
                Assert.True(state is "mapping" or "shuffling", $"the job is {state} before anything failed: the test proves nothing");
                if (state == "shuffling")
                {
                    _output.WriteLine($"job {jobId} shuffling {clock.ElapsedMilliseconds} ms after submission");
                    return jobId;
                }
                Assert.True(clock.Elapsed < TimeSpan.FromSeconds(60), "the shuffle never started");
                Thread.Sleep(5);
            }
        }

        public JsonDocument Status(string jobId)
        {
            var status = Cli("status", jobId, "--json");
            Assert.True(status.ExitCode == 0, status.ToString());
            return JsonDocument.Parse(status.Stdout);
        }

        public JsonDocument WaitForJob(string jobId)
        {
            var wait = Cli("status", jobId, "--wait", "--json");
            Assert.True(wait.ExitCode == 0, wait.ToString());
            var status = JsonDocument.Parse(wait.Stdout);
            Assert.Equal("done", status.RootElement.GetProperty("state").GetString());
            return status;
        }

        public void AssertOutputIsTheReference(string jobId, int reducers) =>
            AssertOutputIsTheReference(jobId, new SortJob(), Records, reducers);
    }
}

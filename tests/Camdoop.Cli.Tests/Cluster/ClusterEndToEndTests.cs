using System.Buffers.Binary;
using System.Text.Json;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Node;
using MessagePack;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// The real cluster end to end: separate node processes exchanging raw Ethernet frames over veth links in
/// a 3x3x3 of network namespaces, a corpus in the replicated chunk store, WordCount submitted through a front-end
/// from outside the cube, outputs checked against the single-process reference.
/// </summary>
[Collection(TestbedCollection.Name)]
public class ClusterEndToEndTests(TestbedCube cube) : IClassFixture<TestbedCube>
{
    [RootTheory]
    [InlineData(1, "camdoop")]
    [InlineData(1, "noagg")]
    [InlineData(27, "camdoop")]
    [InlineData(27, "noagg")]
    [InlineData(7, "camdoop", "paper")]
    [InlineData(1, "tcp")] // TCP Camdoop: kernel TCP through the switch namespace
    [InlineData(27, "tcp")]
    public void WordCountOnTheTestbedEqualsTheReference(int reducers, string mode, string trees = "shallow") =>
        RunWordCount(reducers, mode, trees, []);

    /// <summary>
    /// TCP Camdoop with the job's own admission over kernel TCP: every reducer admitting one sender at a time, and
    /// every sender pushing at once.
    /// </summary>
    [RootTheory]
    [InlineData(27, "--parallel-fetches", "1")]
    [InlineData(1, "--push")]
    public void TcpCamdoopWithTheJobsOwnAdmissionEqualsTheReference(int reducers, params string[] admission) =>
        RunWordCount(reducers, "tcp", "shallow", admission);

    private void RunWordCount(int reducers, string mode, string trees, string[] extra)
    {
        var submit = cube.Cli(["submit", "--job", "wordcount", "--input", "corpus", "--reducers", $"{reducers}", "--mode", mode, "--trees", trees, .. extra, "--wait", "--json"]);
        Assert.True(submit.ExitCode == 0, submit.ToString());
        using var json = JsonDocument.Parse(submit.Stdout);
        var root = json.RootElement;
        string jobId = root.GetProperty("jobId").GetString()!;
        Assert.Equal("done", root.GetProperty("state").GetString());
        Assert.Equal(trees, root.GetProperty("trees").GetString());
        // On a loaded machine a server silent for seconds is taken for lost: TCP Camdoop then starts the job over on
        // the servers left (it has no recovery), and those map it.
        int left = mode == "tcp"
            ? root.GetProperty("failures").EnumerateArray().Count(f => f.GetProperty("during").GetString() is "mapping" or "shuffling")
            : 0;
        Assert.True(27 - left == root.GetProperty("mapsDone").GetInt64(), submit.Stdout);
        Assert.Equal(cube.Corpus.Length, root.GetProperty("inputBytes").GetInt64());
        Assert.True(root.GetProperty("shuffleReduceSeconds").GetDouble() > 0);
        Assert.True(root.GetProperty("jobSeconds").GetDouble() >= root.GetProperty("shuffleReduceSeconds").GetDouble());
        Assert.Equal(reducers, root.GetProperty("outputs").GetArrayLength());

        string outPath = Path.Combine(cube.WorkDirectory, $"wc-{reducers}-{mode}-{trees}{string.Concat(extra)}.txt");
        var cat = cube.Cli("cat", jobId, "--out", outPath);
        Assert.True(cat.ExitCode == 0, cat.ToString());
        var reference = ReferenceMapReduce.Run(new WordCountJob(), [cube.Corpus], reducers);
        var expected = Enumerable.Range(0, reducers).SelectMany(reference.Format).ToArray();
        Assert.True(expected.AsSpan().SequenceEqual(File.ReadAllBytes(outPath)), $"job {jobId} output differs from the reference");
        if (mode == "tcp")
        {
            // A job started over runs its last attempt under that attempt's own shuffle id, which the jobs table lists
            // instead of the job's: only a job that did not start over is checked there.
            if (root.GetProperty("attempt").GetInt32() == 0)
            {
                AssertJobsTableShowsItFinished(jobId, reducers);
            }
        }
    }

    /// <summary>TCP Camdoop's jobs are in the jobs table too, as the web view's Jobs panel reads it: finished on every server.</summary>
    private void AssertJobsTableShowsItFinished(string jobId, int reducers)
    {
        // A round answered by every server: on a loaded machine one may miss the round's deadline, then ask again.
        CliResult? query = null;
        EmulatedCube.WaitUntil(() =>
        {
            query = cube.Cli("query", "select job, state, count(*) as servers, sum(reduce_tasks_done) as done from jobs group by job, state every 1s", "--once", "--json");
            return query.ExitCode == 0;
        }, "no round of the jobs table was answered by every server", seconds: 30);
        using var round = JsonDocument.Parse(query!.Stdout);
        var rows = round.RootElement.GetProperty("rows").EnumerateArray()
            .Select(r => r.EnumerateArray().Select(v => v.GetString()!).ToArray()).Where(r => r[0] == jobId).ToList();
        var row = Assert.Single(rows);
        Assert.Equal(["finished", "27", $"{reducers}"], row[1..]);
    }

    [RootFact]
    public void AFakeStreamOnTheStreamPortIsRefusedAndReachesNoJob()
    {
        // What anyone on the client network could send: a stream preamble naming server 0,0,0, then records, in clear,
        // to every server's stream port while a TCP Camdoop job runs.
        long Refused() => cube.State.Servers.Sum(s => cube.NodeStatusOf(s.Coordinate).Counters["streams"]["unauthenticated"]);
        long before = Refused();
        using var stop = new CancellationTokenSource();
        var fakes = Task.Run(() =>
        {
            int sent = 0;
            while (!stop.IsCancellationRequested)
            {
                foreach (var server in cube.State.Servers)
                {
                    using var socket = new System.Net.Sockets.Socket(System.Net.Sockets.AddressFamily.InterNetwork, System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
                    try
                    {
                        socket.Connect(System.Net.IPAddress.Parse(server.Address), Camdoop.Cli.Testbed.TestbedLayout.StreamPort);
                        socket.Send([0x43, 0x44, 0x53, 0x31, 0, 0, 0, 0, .. "the,9999999\n"u8]);
                        socket.Shutdown(System.Net.Sockets.SocketShutdown.Send);
                        sent++;
                    }
                    catch (System.Net.Sockets.SocketException)
                    {
                        // Refused or reset: what a fake should get.
                    }
                }
                Thread.Sleep(50);
            }
            return sent;
        });
        var submit = cube.Cli("submit", "--job", "wordcount", "--input", "corpus", "--reducers", "3", "--mode", "tcp", "--wait", "--json");
        stop.Cancel();
        int fakesSent = fakes.GetAwaiter().GetResult();
        Assert.True(submit.ExitCode == 0, submit.ToString());
        using var json = JsonDocument.Parse(submit.Stdout);
        string jobId = json.RootElement.GetProperty("jobId").GetString()!;
        string outPath = Path.Combine(cube.WorkDirectory, "wc-fake-streams.txt");
        Assert.Equal(0, cube.Cli("cat", jobId, "--out", outPath).ExitCode);
        var reference = ReferenceMapReduce.Run(new WordCountJob(), [cube.Corpus], 3);
        Assert.True(Enumerable.Range(0, 3).SelectMany(reference.Format).ToArray().AsSpan().SequenceEqual(File.ReadAllBytes(outPath)), "a fake stream changed the job's output");
        Assert.True(fakesSent > 0, "no fake stream was sent");
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (Refused() < before + fakesSent && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(200);
        }
        Assert.True(Refused() >= before + fakesSent, $"{fakesSent} fake streams sent, {Refused() - before} refused");
    }

    [RootFact]
    public void NodesSharingTheMachineRunServerGcThatAdaptsToTheirSize()
    {
        // The CLI turns DATAS off for the simulator's one big process; the testbed's 27 nodes share one machine.
        string expected = Environment.GetEnvironmentVariable("DOTNET_GCDynamicAdaptationMode") ?? "1";
        // ... and go from precompiled code straight to optimized code, without an instrumented tier in between.
        string pgo = Environment.GetEnvironmentVariable("DOTNET_TieredPGO") ?? "0";
        foreach (var server in cube.State.Servers)
        {
            var environment = File.ReadAllText($"/proc/{server.Pid}/environ").Split('\0');
            Assert.Contains($"DOTNET_GCDynamicAdaptationMode={expected}", environment);
            Assert.Contains($"DOTNET_TieredPGO={pgo}", environment);
        }
    }

    [RootFact]
    public void FramesDroppedInTheKernelBufferAreRecoveredAndResultsStayExact()
    {
        // A file of 100-byte records in 1 MB chunks: many transfers touch server (1,1,1), whose receive buffer holds
        // about two jumbo frames.
        var random = new Random(3);
        var data = new byte[8_000_000];
        random.NextBytes(data);
        string input = Path.Combine(cube.WorkDirectory, "records.bin");
        File.WriteAllBytes(input, data);
        var put = cube.Cli("put", input, "--name", "records", "--format", "records100", "--chunk-size", "1MB");
        Assert.True(put.ExitCode == 0, put.ToString());
        string back = Path.Combine(cube.WorkDirectory, "records.back");
        var get = cube.Cli("get", "records", "--out", back);
        Assert.True(get.ExitCode == 0, get.ToString());
        Assert.True(data.AsSpan().SequenceEqual(File.ReadAllBytes(back)), "the dataset read back differs");

        // Every stream of an R=27 shuffle crosses links into (1,1,1) or out of it.
        var submit = cube.Cli("submit", "--job", "wordcount", "--input", "corpus", "--reducers", "27", "--mode", "camdoop", "--wait", "--json");
        Assert.True(submit.ExitCode == 0, submit.ToString());
        string jobId = JsonDocument.Parse(submit.Stdout).RootElement.GetProperty("jobId").GetString()!;
        string outPath = Path.Combine(cube.WorkDirectory, "wc-lossy.txt");
        Assert.Equal(0, cube.Cli("cat", jobId, "--out", outPath).ExitCode);
        var reference = ReferenceMapReduce.Run(new WordCountJob(), [cube.Corpus], 27);
        Assert.True(Enumerable.Range(0, 27).SelectMany(reference.Format).ToArray().AsSpan().SequenceEqual(File.ReadAllBytes(outPath)));

        Thread.Sleep(1500); // status files are rewritten every second
        long drops = cube.NodeStatusOf(TestbedCube.LossyServer).Links.Sum(l => l.KernelDrops);
        Assert.True(drops > 0, "the kernel dropped nothing at the server with the tiny buffer: the test proves nothing");
        long recoveries = cube.Sum("chunkStore", "timeouts") + cube.Sum("chunkStore", "fastRetransmits")
            + cube.Sum("camdoop", "timeouts") + cube.Sum("camdoop", "fastRetransmits");
        Assert.True(recoveries > 0, $"{drops} frames dropped, but no transport retransmitted");
    }

    [RootFact]
    public void ANodeReceivingGarbageFramesCountsThemAndKeepsWorking()
    {
        // Inject from (0,2,2)'s namespace on its +X interface, which is cabled to (1,2,2)'s -X port.
        var sender = cube.Server("0,2,2");
        var target = cube.Server("1,0,2");
        long rejectedBefore = cube.NodeStatusOf(target.Coordinate).Counters["node"]["framesRejected"];
        long malformedBefore = cube.NodeStatusOf(target.Coordinate).Counters["chunkStore"]["malformed"];
        var victim = cube.Server("1,2,2");
        long victimRejectedBefore = cube.NodeStatusOf(victim.Coordinate).Counters["node"]["framesRejected"];
        int sent = NetworkNamespace.Run(sender.Namespace, () =>
        {
            using var socket = PacketSocket.Open("xplus");
            var random = new Random(9);
            int n = 0;
            for (int i = 0; i < 200; i++)
            {
                var frame = new byte[random.Next(FrameLayout.MinFrameSize, 1500)];
                random.NextBytes(frame);
                MacAddressBroadcast(frame);
                socket.MacAddress.Write(frame.AsSpan(6));
                BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(12), FrameLayout.EtherType);
                // Half garbage after the EtherType; half plausible headers that lie (bad version, lengths,
                // coordinates, unknown services, TTL 0).
                if (i % 2 == 1)
                {
                    frame[14] = (byte)(i % 4 == 1 ? FrameLayout.Version : 7);
                    frame[15] = (byte)(i % 8 == 1 ? WellKnownServices.ChunkStore : random.Next(6, 256));
                    frame[16] = 0;
                }
                socket.Send(frame);
                n++;
            }
            // Routed frames with valid headers for the chunk store at (1,0,2), carrying garbage: forwarded by
            // (1,2,2) and rejected by the chunk store at the destination.
            for (int i = 0; i < 20; i++)
            {
                var payload = new byte[40];
                random.NextBytes(payload);
                payload[0] = (byte)((i % 9) + 1);
                var header = new FrameHeader(WellKnownServices.ChunkStore, new(0, 2, 2), new(1, 0, 2), FrameFlags.CoordinateRouted, ttl: 8);
                var frame = new byte[FrameLayout.MaxFrameSize];
                int length = FrameCodec.Write(frame, ref header, default, payload);
                MacAddressBroadcast(frame);
                socket.MacAddress.Write(frame.AsSpan(6));
                socket.Send(frame.AsSpan(0, length));
                n++;
            }
            return n;
        });
        Assert.Equal(220, sent);
        Thread.Sleep(2500);
        var victimStatus = cube.NodeStatusOf(victim.Coordinate);
        Assert.True(victimStatus.Counters["node"]["framesRejected"] - victimRejectedBefore >= 100, "the node did not count the garbage it rejected");
        Assert.Equal("running", victimStatus.State);
        Assert.Equal(6, victimStatus.LinksUp);
        var targetStatus = cube.NodeStatusOf(target.Coordinate);
        Assert.True(targetStatus.Counters["chunkStore"]["malformed"] - malformedBefore > 0, "the chunk store did not count malformed payloads");
        Assert.True(targetStatus.Counters["node"]["framesRejected"] >= rejectedBefore);

        var ping = cube.Cli("ping", victim.Coordinate, "--count", "3", "--interval", "10ms", "--json");
        Assert.True(ping.ExitCode == 0, ping.ToString());
        Assert.Equal(3, JsonDocument.Parse(ping.Stdout).RootElement.GetProperty("replied").GetInt64());
        var ls = cube.Cli("ls", "--json");
        Assert.True(ls.ExitCode == 0, ls.ToString());
        Assert.Contains("corpus", ls.Stdout, StringComparison.Ordinal);
    }

    [RootFact]
    public void TheFrontEndAnswersMalformedAndOversizedSubmissionsWithAnErrorAndStaysUp()
    {
        using (var client = FrontEndClient.Connect(cube.FrontEnd, cube.Key))
        {
            client.SendRaw([0, 0, 0, 3, 0xc1, 0xc1, 0xc1]);
            var reply = client.ReadReply()!;
            Assert.False(reply.Ok);
            Assert.Contains("malformed", reply.Error, StringComparison.Ordinal);
            // A submission whose "reducers" is a string, as no well-behaved client sends it.
            var submit = new Dictionary<string, object?> { ["op"] = "submit", ["id"] = 5L, ["job"] = "wordcount", ["input"] = "corpus", ["reducers"] = "many", ["mode"] = "camdoop" };
            var body = MessagePackSerializer.Serialize(submit, MessagePackSerializerOptions.Standard);
            client.SendRaw(MessageFraming.Prefix(body));
            var bad = client.ReadReply()!;
            Assert.False(bad.Ok);
            Assert.Equal(5, bad.Id);
            Assert.Contains("reducers", bad.Error, StringComparison.Ordinal);
            // A tree family the cube does not know.
            submit["id"] = 6L;
            submit["reducers"] = 2L;
            submit["trees"] = "bushy";
            client.SendRaw(MessageFraming.Prefix(MessagePackSerializer.Serialize(submit, MessagePackSerializerOptions.Standard)));
            bad = client.ReadReply()!;
            Assert.False(bad.Ok);
            Assert.Equal(6, bad.Id);
            Assert.Equal("unknown tree family 'bushy' (shallow or paper)", bad.Error);
            var hello = client.Call(new HelloRequest());
            Assert.Equal(27, hello.Servers);
        }
        using (var client = FrontEndClient.Connect(cube.FrontEnd, cube.Key))
        {
            client.SendRaw([0x7f, 0xff, 0xff, 0xff]);
            var reply = client.ReadReply()!;
            Assert.Contains("exceeds the front-end's maximum", reply.Error, StringComparison.Ordinal);
            Assert.Null(client.ReadReply());
        }
        using (var client = FrontEndClient.Connect(cube.FrontEnd, cube.Key))
        {
            Assert.Equal("3x3x3", client.Call(new HelloRequest()).Torus);
        }
    }

    /// <summary>
    /// Nodes load job code only from the testbed's job assembly directory, by file name: a path outside it, `..` or a
    /// link leading out is refused by every server's front-end in one line and every node stays up; the same
    /// assembly installed in the directory runs, and its output equals the single-process reference.
    /// </summary>
    [RootFact]
    public void JobAssembliesLoadOnlyFromTheTestbedsDirectory()
    {
        string directory = cube.State.JobAssemblyDirectory!;
        Assert.Equal(Path.Combine(cube.State.DataRoot, "job-assemblies"), directory);
        string outside = Path.Combine(cube.WorkDirectory, "outside");
        Directory.CreateDirectory(outside);
        string assembly = typeof(LineLengthJob).Assembly.Location;
        string type = typeof(LineLengthJob).FullName!;
        File.Copy(assembly, Path.Combine(outside, "LineJobs.dll"), overwrite: true);
        string link = Path.Combine(directory, "Escape.dll");
        File.Delete(link);
        File.CreateSymbolicLink(link, Path.Combine(outside, "LineJobs.dll"));

        foreach (var (job, reason) in new[]
        {
            ($"{Path.Combine(outside, "LineJobs.dll")}#{type}", "by its file name alone"),
            ($"../../{Path.GetFileName(cube.WorkDirectory)}/outside/LineJobs.dll#{type}", "by its file name alone"),
            ($"Escape.dll#{type}", "a link leading out of the job assembly directory"),
            ($"LineJobs.dll#{type}", "is not in this server's job assembly directory"),
        })
        {
            AssertOneLineError(cube.Cli("submit", "--job", job, "--input", "corpus"), reason);
            foreach (var server in cube.State.Servers)
            {
                using var client = FrontEndClient.Connect($"{server.Address}:{cube.State.FrontEndPort}", cube.Key);
                var refused = Assert.Throws<FrontEndException>(() => client.Call(new SubmitRequest { Job = job, Input = "corpus", Reducers = 1, Mode = "camdoop" }));
                Assert.Contains(reason, refused.Message, StringComparison.Ordinal);
            }
        }
        Assert.All(cube.State.Servers, s => Assert.Equal("running", cube.NodeStatusOf(s.Coordinate).State));

        File.Copy(assembly, Path.Combine(directory, "LineJobs.dll"), overwrite: true);
        var submit = cube.Cli("submit", "--job", $"LineJobs.dll#{type}", "--input", "corpus", "--reducers", "3", "--wait", "--json");
        Assert.True(submit.ExitCode == 0, submit.ToString());
        using var json = JsonDocument.Parse(submit.Stdout);
        Assert.Equal("done", json.RootElement.GetProperty("state").GetString());
        string outPath = Path.Combine(cube.WorkDirectory, "line-lengths.txt");
        var cat = cube.Cli("cat", json.RootElement.GetProperty("jobId").GetString()!, "--out", outPath);
        Assert.True(cat.ExitCode == 0, cat.ToString());
        var reference = ReferenceMapReduce.Run(new LineLengthJob(), [cube.Corpus], 3);
        Assert.Equal(Enumerable.Range(0, 3).SelectMany(reference.Format).ToArray(), File.ReadAllBytes(outPath));
    }

    [RootFact]
    public void UserErrorsAreOneClearLine()
    {
        AssertOneLineError(cube.Cli("put", Path.Combine(cube.WorkDirectory, "no-such-file"), "--name", "x"), "no such file");
        AssertOneLineError(cube.Cli("submit", "--job", "wordcount", "--input", "no-such-dataset", "--reducers", "2", "--wait"), "unknown dataset 'no-such-dataset'");
        AssertOneLineError(cube.Cli("submit", "--job", "nosuchjob", "--input", "corpus"), "unknown job 'nosuchjob'");
        AssertOneLineError(cube.Cli("get", "no-such-dataset"), "unknown dataset 'no-such-dataset'");
        AssertOneLineError(cube.Cli("put", cube.CorpusPath, "--name", "corpus"), "dataset 'corpus' already exists");
        AssertOneLineError(CliRunner.Run("ls", "--frontend", "10.205.250.250:7070", "--certs", cube.State.ClientCerts!), "is unreachable");
        AssertOneLineError(CliRunner.Run("ls", "--frontend", "10.205.250.250:7070"), "ls: no client credentials for front-end 10.205.250.250:7070: give --certs DIR or set CAMDOOP_CERTS");
        AssertOneLineError(cube.Cli("put", cube.CorpusPath, "--name", "../escape"), "'../escape' is not a valid dataset name: it contains a path separator ('/')");
        AssertOneLineError(cube.Cli("submit", "--job", "wordcount", "--input", "corpus", "--output", "a..b"), "'a..b' is not a valid output dataset name: it contains '..'");
        AssertOneLineError(cube.Cli("submit", "--job", "wordcount", "--input", "corpus", "--push"), "push and parallel fetches are TCP Camdoop's (mode tcp)");
        AssertOneLineError(cube.Cli("submit", "--job", "wordcount", "--input", "corpus", "--mode", "tcp", "--push", "--parallel-fetches", "2"),
            "--parallel-fetches bounds admitted streams; --push admits none");
    }

    [RootFact]
    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    public void OnlyClientsWithACertificateOfTheTestbedsCaAreServedAndRefusalsAreCounted()
    {
        const UnixFileMode Private = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        string certs = cube.State.ClientCerts!;
        Assert.Equal(Private, File.GetUnixFileMode(Path.Combine(certs, "client.key")));
        Assert.True(File.Exists(Path.Combine(certs, "ca.crt")) && File.Exists(Path.Combine(certs, "client.crt")));
        Assert.False(File.Exists(Path.Combine(certs, "ca.key")), "the CA's key was handed to the client");
        string authority = Path.Combine(cube.State.DataRoot, "ca");
        Assert.Equal(Private, File.GetUnixFileMode(Path.Combine(authority, "ca.key")));
        Assert.All(cube.State.Servers, s =>
        {
            string dir = Camdoop.Hosting.NodeConfig.Load(s.Config).CertsDirectory!;
            Assert.Equal(Private, File.GetUnixFileMode(Path.Combine(dir, "node.key")));
        });

        // Another cluster's client, made with `camdoop certs` as an operator would: refused in one line both ways.
        string other = Path.Combine(cube.WorkDirectory, "other-ca");
        string mallory = Path.Combine(cube.WorkDirectory, "mallory");
        Assert.Equal(0, CliRunner.Run("certs", "init", "--ca-dir", other, "--name", "other").ExitCode);
        Assert.Equal(0, CliRunner.Run("certs", "client", "--ca-dir", other, "--name", "mallory", "--out", mallory).ExitCode);
        long refusedBefore = cube.NodeStatusOf("0,0,0").Counters["frontEnd"]["authCertificate"];
        AssertOneLineError(cube.Cli("ls", "--certs", mallory), $"front-end {cube.FrontEnd} is not a server of this cluster: the certificate of node '0,0,0' was not issued by this cluster's CA");
        AssertOneLineError(CliRunner.RunWith(new Dictionary<string, string?> { ["CAMDOOP_CERTS"] = mallory }, "ls", "--frontend", cube.FrontEnd), "is not a server of this cluster");
        AssertOneLineError(cube.Cli("ls", "--certs", Path.Combine(cube.WorkDirectory, "absent")), "credentials directory");
        // A new client signed by the testbed's own CA is served; --certs wins over the environment; the testbed's own
        // credentials are found without either.
        string bob = Path.Combine(cube.WorkDirectory, "bob");
        var issued = CliRunner.Run("certs", "client", "--ca-dir", authority, "--name", "bob", "--out", bob);
        Assert.True(issued.ExitCode == 0, issued.ToString());
        Assert.Contains("client 'bob'", CliRunner.Run("certs", "show", bob).Stdout, StringComparison.Ordinal);
        var right = CliRunner.RunWith(new Dictionary<string, string?> { ["CAMDOOP_CERTS"] = mallory }, "ls", "--frontend", cube.FrontEnd, "--certs", bob);
        Assert.True(right.ExitCode == 0, right.ToString());
        var found = cube.Cli("ls");
        Assert.True(found.ExitCode == 0, found.ToString());

        // The front-end counted both refusals (status is written every second), logged them, and goes on serving.
        var frontEnd = cube.Server("0,0,0");
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (cube.NodeStatusOf("0,0,0").Counters["frontEnd"]["authCertificate"] < refusedBefore + 2 && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(100);
        }
        Assert.Equal(refusedBefore + 2, cube.NodeStatusOf("0,0,0").Counters["frontEnd"]["authCertificate"]);
        Assert.Contains("not issued by this cluster's CA", File.ReadAllText(Path.Combine(frontEnd.DataDirectory, "node.log")), StringComparison.Ordinal);
    }

    [PcapRootFact]
    public void ACaptureOnTheClientNetworkDuringPutAndGetNeverHoldsTheFilesBytes()
    {
        // Printable bytes, as a text dataset would be, none of it repeated.
        var rng = new Random(71);
        byte[] data = new byte[3 << 20];
        for (int i = 0; i < data.Length; i++)
        {
            data[i] = (byte)rng.Next(33, 127);
        }
        string file = cube.Write("secret.txt", data);
        string host = cube.State.Layout().HostInterface;
        using var device = SharpPcap.CaptureDeviceList.New().OfType<SharpPcap.LibPcap.LibPcapLiveDevice>().Single(d => d.Name == host);
        device.Open(new SharpPcap.DeviceConfiguration { Mode = SharpPcap.DeviceModes.Promiscuous, ReadTimeout = 100, Snaplen = 65535, BufferSize = 128 << 20 });
        device.Filter = $"tcp port {cube.State.FrontEndPort}";
        var captured = new MemoryStream();
        device.OnPacketArrival += (_, e) =>
        {
            var packet = e.GetPacket();
            lock (captured)
            {
                captured.Write(packet.Data);
            }
        };
        device.StartCapture();
        try
        {
            var put = cube.Cli("put", file, "--name", "secret");
            Assert.True(put.ExitCode == 0, put.ToString());
            var get = cube.Cli("get", "secret", "--out", Path.Combine(cube.WorkDirectory, "secret.back"));
            Assert.True(get.ExitCode == 0, get.ToString());
            Thread.Sleep(500);
        }
        finally
        {
            device.StopCapture();
        }
        Assert.Equal(data, File.ReadAllBytes(Path.Combine(cube.WorkDirectory, "secret.back")));
        byte[] wire;
        lock (captured)
        {
            wire = captured.ToArray();
        }
        // The capture saw the upload and the download go by (so its silence below means something)...
        Assert.True(wire.Length > 2 * data.Length, $"captured {wire.Length} bytes for a {data.Length}-byte file sent twice");
        // ...and none of 200 pieces of the file is in it.
        for (int piece = 0; piece < 200; piece++)
        {
            int at = piece * (data.Length / 200);
            Assert.True(wire.AsSpan().IndexOf(data.AsSpan(at, 24)) < 0, $"the file's bytes at {at} crossed the client network in clear");
        }
        Assert.Equal(0, cube.Cli("rm", "secret").ExitCode);
    }

    [RootFact]
    public void PingMeasuresRoundTripsOverTheTorusLinks()
    {
        var ping = cube.Cli("ping", "2,2,2", "--count", "5", "--interval", "20ms", "--json");
        Assert.True(ping.ExitCode == 0, ping.ToString());
        var root = JsonDocument.Parse(ping.Stdout).RootElement;
        Assert.Equal(3, root.GetProperty("distance").GetInt64());
        Assert.Equal(5, root.GetProperty("replied").GetInt64());
        Assert.True(root.GetProperty("meanRttPerHopMs").GetDouble() > 0);
    }

    private static void AssertOneLineError(CliResult result, string expected)
    {
        Assert.NotEqual(0, result.ExitCode);
        var lines = result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).Where(l => !l.Contains('[', StringComparison.Ordinal)).ToList();
        Assert.True(lines.Count == 1, result.ToString());
        Assert.Contains(expected, lines[0], StringComparison.Ordinal);
    }

    private static void MacAddressBroadcast(byte[] frame) => frame.AsSpan(0, 6).Fill(0xff);
}

using System.Buffers;
using System.Text.Json;
using Camdoop.FrontEnd.Wire;
using MessagePack;

namespace Camdoop.MapReduce.Tests.FrontEnd;

public class FrontEndWireTests
{
    private static readonly byte[] Blob = Enumerable.Range(0, 70_000).Select(i => (byte)i).ToArray();

    private static readonly string LongText = new('é', 40_000);

    /// <summary>One instance of every message type, every field set to something other than its default.</summary>
    private static IEnumerable<object> Samples()
    {
        using var status = JsonDocument.Parse("""{"coordinate":"0,0,0","linksUp":6,"ratio":0.25,"big":18446744073709551615,"links":[{"port":"+X","up":true,"peerMac":null}],"counters":{"node":{"framesRejected":-3}}}""");
        yield return new HelloRequest { Id = 1 };
        yield return new HelloReply { Id = 1, Server = "1,2,0", Torus = "3x3x3", Servers = 27, Reachable = 26 };
        yield return new StatusRequest { Id = 2 };
        yield return new StatusReply { Id = 2, Status = status.RootElement.Clone() };
        yield return new PingRequest { Id = 3, Target = "2,2,2", Count = 10_000, IntervalMs = 0, TimeoutMs = 60_000 };
        yield return new PingPart { Id = 3, More = true, Seq = 9, Distance = 3, RttNs = 130_000, ForwardHops = 3, ReturnHops = 4, Lost = "timed out" };
        yield return new PingReply { Id = 3, Source = "0,0,0", Target = "2,2,2", Sent = 10, Replied = 9 };
        yield return new DataPart { Id = 4, More = true, Offset = 4 << 20, Data = Blob.AsMemory(1, 69_000) };
        yield return new PutBeginRequest { Id = 5, Name = LongText, Format = "records", RecordSize = 100, Chunks = 100_000, TotalBytes = long.MaxValue };
        yield return new PutBeginReply { Id = 5, Servers = 512 };
        yield return new PutChunkRequest { Id = 6, Index = 7, Length = 70_000, Offset = 0, Data = Blob, Final = true, Checksum = long.MinValue };
        yield return new PutChunkReply { Id = 6, Received = 70_000, Chunk = new string('a', 40), Replicas = ["0,0,0", "1,0,0", "2,0,0"] };
        yield return new PutEndRequest { Id = 7 };
        yield return new PutEndReply { Id = 7, Name = "corpus", Chunks = 27, Bytes = 1L << 40 };
        yield return new GetManifestRequest { Id = 8, Name = "corpus" };
        yield return new ManifestReply
        {
            Id = 8,
            Name = "corpus",
            Format = "records100",
            TotalBytes = 300,
            Created = 1_700_000_000_000,
            Chunks = [new ManifestChunkInfo { Id = new string('b', 40), Length = 300, Checksum = -1 }],
        };
        yield return new ManifestChunkInfo { Id = new string('c', 40), Length = 1, Checksum = 42 };
        yield return new GetChunkRequest { Id = 9, Chunk = new string('d', 40) };
        yield return new GetChunkReply { Id = 9, Length = 70_000, Checksum = -5, From = "2,1,0", Repairs = 1 };
        yield return new LsRequest { Id = 10 };
        yield return new LsReply
        {
            Id = 10,
            Datasets = [new DatasetInfo { Name = "corpus", Bytes = 1000, Chunks = 27, Format = "text" }],
            ServersAsked = 27,
            Unanswered = ["1,1,1"],
        };
        yield return new DatasetInfo { Name = "x", Bytes = 1, Chunks = 1, Format = "records7" };
        yield return new SubmitRequest { Id = 11, Job = "topk?k=5", Input = "corpus", Reducers = 27, Mode = "noagg", Output = "out", Trees = "paper" };
        yield return new SubmitReply { Id = 11, JobId = "00000000deadbeef" };
        yield return new JobStatusRequest { Id = 12, JobId = "00000000deadbeef" };
        yield return new JobStatusReply
        {
            Id = 12,
            JobId = "00000000deadbeef",
            Job = "wordcount",
            Input = "corpus",
            Reducers = 2,
            Mode = "camdoop",
            Trees = "shallow",
            State = "failed",
            Servers = 27,
            MapsDone = 26,
            MapTasks = 27,
            InputBytes = 1,
            IntermediateBytes = 2,
            ShuffleBytes = 3,
            ReducesDone = 1,
            JobSeconds = 1.5,
            MapSeconds = 0.25,
            ShuffleReduceSeconds = 1e-9,
            Failure = "server 1,1,1 failed",
            OutputDataset = "out",
            Outputs = [new JobOutputInfo { ReduceTask = 1, Server = "1,0,0", Path = "/data/part-00001", Chunk = new string('e', 40), Records = 5, Bytes = 60 }],
            Failures = [new JobFailureInfo { Server = "1,1,1", DetectedAtSeconds = 0.5, DetectedAtUnixMs = 1_795_000_000_000, During = "shuffling" }],
            Recovery = new JobRecoveryInfo { ResentBytes = 7, MapTasksRerun = 1, VerticesAdopted = 6 },
        };
        yield return new JobOutputInfo { ReduceTask = 0, Server = "0,0,0", Path = null, Chunk = "c", Records = 0, Bytes = 0 };
        yield return new JobFailureInfo { Server = "2,2,2", DetectedAtSeconds = 3.25, DetectedAtUnixMs = 1, During = "mapping" };
        yield return new JobRecoveryInfo { ResentBytes = 1L << 40, MapTasksRerun = 2, VerticesAdopted = 0 };
        yield return new JobPartRequest { Id = 13, JobId = "00000000deadbeef", ReduceTask = 26 };
        yield return new JobPartReply { Id = 13, Length = 70_000, Server = "2,2,2" };
        yield return new JobsRequest { Id = 16 };
        yield return new JobsReply
        {
            Id = 16,
            Jobs = [new JobSummary { JobId = "00000000deadbeef", Job = "wordcount", Input = "corpus", Reducers = 27, Mode = "noagg", State = "killed", Servers = 27, MapsDone = 27, ShuffleBytes = 9, ReducesDone = 3, SubmittedUnixMs = 1_795_000_000_000, JobSeconds = 2.5, ShuffleReduceSeconds = 1.25, Failure = "killed by an operator" }],
        };
        yield return new JobSummary { JobId = "0000000000000001", Job = "sort", Input = "records", Reducers = 1, Mode = "camdoop", State = "mapping" };
        yield return new KillRequest { Id = 17, JobId = "00000000deadbeef" };
        yield return new KillReply { Id = 17, JobId = "00000000deadbeef", Was = "shuffling", Servers = 27 };
        yield return new LimitRequest { Id = 20, Service = "chunk-store", BytesPerSecond = 6_250_000, Ports = ["+X", "-Z"], Servers = ["0,0,0", "2,1,0"] };
        yield return new LimitEntry { Kind = "service", Target = "camdoop", BytesPerSecond = 1, Servers = 1, Queues = 6 };
        yield return new LimitReply { Id = 20, Kind = "service", Target = "chunk-store", BytesPerSecond = 6_250_000, Ports = ["+X", "-Z"], Servers = 2, Confirmed = 4, Expected = 4 };
        yield return new LimitsRequest { Id = 22 };
        yield return new LimitsReply
        {
            Id = 22,
            Limits = [new LimitEntry { Kind = "job", Target = "00000000deadbeef", BytesPerSecond = 1L << 40, Servers = 27, Queues = 27 }],
            Servers = 26,
            ServersInCube = 27,
        };
        yield return new DecommissionRequest { Id = 31, Servers = ["1,0,0", "2,0,0"], Recommission = false, StatusOnly = true };
        yield return new DecommissionReply
        {
            Id = 31,
            Decommissioned = ["1,0,0"],
            Unanswered = ["2,2,2"],
            ReplicasHeld = 40,
            NotYetElsewhere = 12,
            DrainUnanswered = ["2,0,0"],
            Safe = false,
        };
        yield return new FsckRequest { Id = 30, Name = "wiki" };
        yield return new FsckReply
        {
            Id = 30,
            Chunks = 27,
            Replicas = 80,
            UnderReplicated = 1,
            Missing = 1,
            Corrupt = 2,
            Required = 3,
            LiveServers = 26,
            Unanswered = ["1,1,1"],
            Datasets =
            [
                new FsckDatasetInfo
                {
                    Name = "wiki",
                    Chunks = 27,
                    Replicas = 80,
                    UnderReplicated = 1,
                    Missing = 1,
                    Corrupt = 2,
                    ManifestReplicas = 3,
                    Error = "damaged",
                    ProblemCount = 1,
                    Problems = [new FsckChunkInfo { Chunk = new string('e', 40), Index = 4, Good = 0, Replicas = [new FsckReplicaInfo { Server = "1,0,0", State = "corrupt" }], Placement = ["1,0,0", "2,0,0", "1,1,0"] }],
                },
            ],
        };
        yield return new FsckDatasetInfo { Name = "x", Chunks = 1, Replicas = 3, ManifestReplicas = 2, ProblemCount = 7 };
        yield return new FsckChunkInfo { Chunk = new string('f', 40), Index = -1, Good = 2, Placement = ["0,0,0"] };
        yield return new FsckReplicaInfo { Server = "2,2,2", State = "unchecked" };
        yield return new RmRequest { Id = 18, Name = "corpus" };
        yield return new RmReply { Id = 18, Name = "corpus", Replicas = 84, Bytes = 1L << 33, Unanswered = ["2,2,2"] };
        yield return new QueryRequest { Id = 19, Query = "select port, sum(bytes_sent) from links group by port every 1s", Rounds = 3 };
        yield return new QueryPart
        {
            Id = 19,
            More = true,
            Round = 2,
            Columns = ["port", "sum(bytes_sent)"],
            Rows = [["+X", "12345"], ["-Z", ""]],
            Servers = 26,
            ServersInCube = 27,
            LatencyNs = 18_400_000,
        };
        yield return new QueryReply { Id = 19, Rounds = 3 };
        yield return new TlsGreeting { Id = 0, Protocol = TlsGreeting.CurrentProtocol };
        yield return new Welcome { Id = 0, Server = "1,2,0", Client = "alice" };
        yield return new WebLoginRequest { Id = 23 };
        yield return new WebLoginReply { Id = 23, Code = new string('c', 64), Port = 7080, ExpiresInSeconds = 60, SessionSeconds = 28_800 };
        yield return new WebRevokeRequest { Id = 24 };
        yield return new WebRevokeReply { Id = 24, Sessions = 3, LoginCodes = 1, Port = 7080 };
        yield return new MetricsRequest { Id = 40 };
        yield return new MetricsReply { Id = 40, Bytes = 361_707, Servers = 26, ServersInCube = 27, MergeNs = 301_142_635 };
        yield return new MetricsTokenRequest { Id = 41, Days = 366 };
        yield return new MetricsTokenReply { Id = 41, Token = new string('d', 64), Port = 7080, ExpiresUnixSeconds = 1_800_000_000 };
        yield return new MetricsRevokeRequest { Id = 42 };
        yield return new MetricsRevokeReply { Id = 42, Tokens = 2, Port = 7080 };
        yield return new RequestEnvelope { Op = "hello", Id = -1 };
        yield return ReplyEnvelope.Failure(14, "unknown dataset 'x'");
    }

    private static object Decode(object sample, byte[] bytes)
    {
        var method = typeof(FrontEndWire).GetMethod(nameof(FrontEndWire.Decode))!.MakeGenericMethod(sample.GetType());
        return method.Invoke(null, [new ReadOnlySequence<byte>(bytes)])!;
    }

    [Fact]
    public void EveryMessageTypeRoundTrips()
    {
        var wireTypes = typeof(FrontEndWire).Assembly.GetTypes()
            .Where(t => t.Namespace == typeof(FrontEndWire).Namespace && t.GetCustomAttributes(typeof(MessagePackObjectAttribute), false).Length > 0)
            .ToHashSet();
        var samples = Samples().ToList();
        Assert.Equal(wireTypes.OrderBy(t => t.Name), samples.Select(s => s.GetType()).OrderBy(t => t.Name));
        foreach (var sample in samples)
        {
            var bytes = FrontEndWire.Serialize(sample);
            var back = Decode(sample, bytes);
            Assert.IsType(sample.GetType(), back);
            // Same bytes again: every field came back (a lost or altered field would change them).
            Assert.Equal(Convert.ToHexString(bytes), Convert.ToHexString(FrontEndWire.Serialize(back)));
            // A map with the wire names as keys, like the JSON the CLI prints.
            Assert.StartsWith("{", MessagePackSerializer.ConvertToJson(bytes), StringComparison.Ordinal);
        }
    }

    [Fact]
    public void FieldsComeBackWithTheirValuesAndTypes()
    {
        var chunk = FrontEndWire.Decode<PutChunkRequest>(new ReadOnlySequence<byte>(FrontEndWire.Serialize(
            new PutChunkRequest { Index = 7, Length = 70_000, Offset = 0, Data = Blob, Final = true, Checksum = long.MinValue })));
        Assert.Equal("put-chunk", chunk.Op);
        Assert.Equal(7, chunk.Index);
        Assert.Equal(Blob, chunk.Data!.Value.ToArray());
        Assert.True(chunk.Final);
        Assert.Equal(long.MinValue, chunk.Checksum);
        var begin = FrontEndWire.Decode<PutBeginRequest>(new ReadOnlySequence<byte>(FrontEndWire.Serialize(new PutBeginRequest { Name = LongText })));
        Assert.Equal(LongText, begin.Name);
        Assert.Null(begin.RecordSize);

        var status = Samples().OfType<StatusReply>().Single();
        var node = FrontEndWire.Decode<StatusReply>(new ReadOnlySequence<byte>(FrontEndWire.Serialize(status))).Status;
        Assert.Equal("0,0,0", node.GetProperty("coordinate").GetString());
        Assert.Equal(6, node.GetProperty("linksUp").GetInt64());
        Assert.Equal(0.25, node.GetProperty("ratio").GetDouble());
        Assert.Equal(ulong.MaxValue, node.GetProperty("big").GetUInt64());
        Assert.True(node.GetProperty("links")[0].GetProperty("up").GetBoolean());
        Assert.Equal(JsonValueKind.Null, node.GetProperty("links")[0].GetProperty("peerMac").ValueKind);
        Assert.Equal(-3, node.GetProperty("counters").GetProperty("node").GetProperty("framesRejected").GetInt64());

        var job = Samples().OfType<JobStatusReply>().Single();
        var back = FrontEndWire.Decode<JobStatusReply>(new ReadOnlySequence<byte>(FrontEndWire.Serialize(job)));
        Assert.Equal(1e-9, back.ShuffleReduceSeconds);
        Assert.Equal("/data/part-00001", back.Outputs.Single().Path);
    }

    [Fact]
    public void EveryRequestTypeIsAnOperationOfTheFrontEnd()
    {
        var requestTypes = typeof(FrontEndRequest).Assembly.GetTypes()
            .Where(t => typeof(FrontEndRequest).IsAssignableFrom(t) && !t.IsAbstract)
            .ToList();
        Assert.Equal(25, requestTypes.Count);
        foreach (var type in requestTypes)
        {
            var request = (FrontEndRequest)Activator.CreateInstance(type)!;
            var body = new ReadOnlySequence<byte>(FrontEndWire.Serialize(request));
            Assert.True(FrontEndOperations.All.TryRead(request.Op, body, out var read), request.Op);
            Assert.IsType(type, read);
        }
        Assert.False(FrontEndOperations.All.TryRead("dance", new ReadOnlySequence<byte>(FrontEndWire.Serialize(new HelloRequest())), out _));
    }

    [Theory]
    [InlineData(0L, "00")]
    [InlineData(127L, "7f")]
    [InlineData(128L, "cc80")]
    [InlineData(256L, "cd0100")]
    [InlineData(65536L, "ce00010000")]
    [InlineData(4294967296L, "cf0000000100000000")]
    [InlineData(-1L, "ff")]
    [InlineData(-32L, "e0")]
    [InlineData(-33L, "d0df")]
    [InlineData(-129L, "d1ff7f")]
    [InlineData(-32769L, "d2ffff7fff")]
    [InlineData(long.MinValue, "d38000000000000000")]
    public void IntegersUseTheSpecsShortestEncodingAndRoundTrip(long value, string hex)
    {
        var bytes = FrontEndWire.Serialize(new PingPart { Seq = value });
        var seq = Convert.FromHexString("a3736571"); // the key "seq"
        int at = bytes.AsSpan().IndexOf(seq) + seq.Length;
        Assert.Equal(hex, Convert.ToHexStringLower(bytes.AsSpan(at, hex.Length / 2)));
        Assert.Equal(value, FrontEndWire.Decode<PingPart>(new ReadOnlySequence<byte>(bytes)).Seq);
    }

    [Fact]
    public void UnknownFieldsAreSkippedWhateverTheyHold()
    {
        var body = WireTestBytes.Map(
            ("op", "hello"),
            ("later", new Dictionary<string, object?> { ["k"] = new object?[] { ulong.MaxValue, new byte[] { 1, 2, 3 }, null, 2.5 } }),
            ("id", 5L));
        var hello = FrontEndWire.Decode<HelloRequest>(new ReadOnlySequence<byte>(body));
        Assert.Equal(5, hello.Id);
    }

    [Theory]
    [InlineData("", "message ends early")]
    [InlineData("a5616263", "past the end")] // str of 5 with only 3 bytes
    [InlineData("dbffffffff", "past the end")] // str of 4 GB
    [InlineData("c6fffffff0", "past the end")] // bin of 4 GB
    [InlineData("dd00100000", "cannot fit")] // array of 1M items in 5 bytes
    [InlineData("ddffffffff", "cannot fit")] // array of 4 billion items
    [InlineData("df00100000", "cannot fit")] // map of 1M entries
    [InlineData("a2c328", "not valid UTF-8")]
    [InlineData("d40100", "extension types are refused")] // fixext 1
    [InlineData("c1", "unsupported MessagePack type 0xc1")]
    [InlineData("8101c0", "map keys must be strings")]
    public void MalformedInputIsAClearInvalidDataException(string hex, string expected)
    {
        var body = new ReadOnlySequence<byte>(WireTestBytes.MapWithRawValue(hex));
        var ex = Assert.Throws<InvalidDataException>(() => WireValidator.Validate(body));
        Assert.StartsWith("malformed message: ", ex.Message, StringComparison.Ordinal);
        Assert.Contains(expected, ex.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidDataException>(() => FrontEndWire.Decode<HelloRequest>(body));
    }

    [Fact]
    public void NestingBeyondTheLimitIsRefused()
    {
        // 40 nested one-element arrays inside a map.
        byte[] deep = [0x81, 0xa1, (byte)'x', .. Enumerable.Repeat((byte)0x91, 40), 0x01];
        var e = Assert.Throws<InvalidDataException>(() => WireValidator.Validate(new ReadOnlySequence<byte>(deep)));
        Assert.Contains("nesting", e.Message, StringComparison.Ordinal);
        // The limit itself is fine: the message and 15 arrays.
        byte[] atLimit = [0x81, 0xa1, (byte)'x', .. Enumerable.Repeat((byte)0x91, WireValidator.MaxDepth - 1), 0x01];
        WireValidator.Validate(new ReadOnlySequence<byte>(atLimit));
    }

    [Fact]
    public void TrailingBytesAndNonMapMessagesAreRefused()
    {
        var ok = FrontEndWire.Serialize(new HelloRequest());
        WireValidator.Validate(new ReadOnlySequence<byte>(ok));
        Assert.Contains("bytes after the end", Assert.Throws<InvalidDataException>(() => WireValidator.Validate(new ReadOnlySequence<byte>([.. ok, 0x01]))).Message, StringComparison.Ordinal);
        Assert.Contains("must be a MessagePack map", Assert.Throws<InvalidDataException>(() => WireValidator.Validate(new ReadOnlySequence<byte>([0x01]))).Message, StringComparison.Ordinal);
        Assert.Contains("must be a MessagePack map", Assert.Throws<InvalidDataException>(() => WireValidator.Validate(ReadOnlySequence<byte>.Empty)).Message, StringComparison.Ordinal);
        Assert.Contains("must be a MessagePack map", Assert.Throws<InvalidDataException>(() => WireValidator.Validate(new ReadOnlySequence<byte>([0x93, 0x01, 0x02, 0x03]))).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AFieldOfTheWrongTypeIsNamed()
    {
        var e = Assert.Throws<FrontEndException>(() => FrontEndWire.Decode<PingRequest>(new ReadOnlySequence<byte>(WireTestBytes.Map(("op", "ping"), ("count", "three")))));
        Assert.Equal("field 'count' is missing or is not an integer", e.Message);
        e = Assert.Throws<FrontEndException>(() => FrontEndWire.Decode<PutChunkRequest>(new ReadOnlySequence<byte>(WireTestBytes.Map(("data", 5L)))));
        Assert.Equal("field 'data' is missing or is not binary data", e.Message);
        e = Assert.Throws<FrontEndException>(() => FrontEndWire.Decode<SubmitRequest>(new ReadOnlySequence<byte>(WireTestBytes.Map(("reducers", "many")))));
        Assert.Equal("field 'reducers' is missing or is not an integer", e.Message);
        e = Assert.Throws<FrontEndException>(() => FrontEndWire.Decode<PutChunkRequest>(new ReadOnlySequence<byte>(WireTestBytes.Map(("final", 1L)))));
        Assert.Equal("field 'final' is missing or is not a boolean", e.Message);
        e = Assert.Throws<FrontEndException>(() => FrontEndWire.Decode<LsReply>(new ReadOnlySequence<byte>(WireTestBytes.Map(("unanswered", "1,1,1")))));
        Assert.Equal("field 'unanswered' is missing or is not a list", e.Message);
        e = Assert.Throws<FrontEndException>(() => FrontEndWire.Decode<PingRequest>(new ReadOnlySequence<byte>(WireTestBytes.Map(("count", ulong.MaxValue)))));
        Assert.Equal("field 'count' is missing or is not an integer", e.Message);

        // Missing fields are named by the session's checks, with the same words.
        var ping = FrontEndWire.Decode<PingRequest>(new ReadOnlySequence<byte>(WireTestBytes.Map(("op", "ping"))));
        Assert.Equal("field 'target' is missing or is not a string", Assert.Throws<FrontEndException>(() => Field.Required(ping.Target, "target")).Message);
        Assert.Equal("field 'count' is missing or is not an integer", Assert.Throws<FrontEndException>(() => Field.Required(ping.Count, "count")).Message);
        Assert.Equal(9, ping.IntervalMs ?? 9);
        var range = Assert.Throws<FrontEndException>(() => Field.InRange(99, "r", 1, 27));
        Assert.Contains("between 1 and 27", range.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void RandomGarbageAndDamagedMessagesNeverEscapeAsAnythingButAClearError()
    {
        var rng = new Random(7);
        var buffer = new byte[64];
        var valid = Samples().Select(s => (Type: s.GetType(), Bytes: FrontEndWire.Serialize(s))).Where(s => s.Bytes.Length < 2000).ToList();
        for (int i = 0; i < 20_000; i++)
        {
            byte[] bytes;
            Type type;
            if (i % 2 == 0)
            {
                rng.NextBytes(buffer);
                bytes = buffer.AsSpan(0, rng.Next(1, buffer.Length)).ToArray();
                type = i % 4 == 0 ? typeof(SubmitRequest) : typeof(HelloRequest);
            }
            else
            {
                var (t, b) = valid[rng.Next(valid.Count)];
                bytes = (byte[])b.Clone();
                for (int flips = rng.Next(1, 4); flips > 0; flips--)
                {
                    bytes[rng.Next(bytes.Length)] = (byte)rng.Next(256);
                }
                type = t;
            }
            try
            {
                Decode(Activator.CreateInstance(type) ?? throw new InvalidOperationException(), bytes);
            }
            catch (System.Reflection.TargetInvocationException e) when (e.InnerException is InvalidDataException or FrontEndException)
            {
                // The only acceptable failures: malformed, or a field of the wrong type.
            }
        }
    }
}

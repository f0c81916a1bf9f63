using System.Runtime.InteropServices;
using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Records;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>The shuffle transport inside whole simulated jobs: loss recovery, malformed frames, and what links carry.</summary>
public sealed class ShuffleTransportTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static JobSimulationOptions Options(Workload workload = Workload.Synthetic, double s = 0.5, int r = 7, ShuffleMode mode = ShuffleMode.Camdoop) => new()
    {
        Torus = Cube,
        Workload = workload,
        OutputRatio = s,
        ReduceTasks = r,
        Mode = mode,
        Settings = new SimulationSettings { BytesPerServer = 20_000, Verify = true },
        MapParallelism = 1,
    };

    /// <summary>The Camdoop payload kind and segment flags of a frame, or null when it is not a Camdoop frame.</summary>
    private static (ShuffleFrameKind Kind, bool Fin)? Inspect(Frame frame, Torus torus)
    {
        if (FrameCodec.TryRead(frame.Span, torus, out var header) != FrameError.None || header.ServiceId != WellKnownServices.Camdoop)
        {
            return null;
        }
        var payload = FrameCodec.Payload(frame.Span, header);
        if (ShuffleWire.TryReadHeader(payload, out var kind, out int count, out _) != WireError.None)
        {
            return null;
        }
        bool fin = false;
        int position = ShuffleWire.FrameHeaderSize;
        for (int i = 0; i < count && kind == ShuffleFrameKind.Data; i++)
        {
            ShuffleWire.TryReadSegment(payload, ref position, torus, out var segment);
            fin |= (segment.Flags & SegmentFlags.Fin) != 0;
        }
        return (kind, fin);
    }

    /// <summary>
    /// The smallest window a service allows is one segment. A record straddling the window's edge cannot be consumed
    /// until its tail arrives, so a receiver that waited for a whole segment of consumption before reopening the window
    /// left the sender blocked until its probe timer (tens of milliseconds per stall).
    /// </summary>
    [Theory]
    [InlineData(ShuffleMode.Camdoop)]
    [InlineData(ShuffleMode.NoAgg)]
    public void AOneSegmentWindowNeverWaitsForProbes(ShuffleMode mode)
    {
        var options = Options(s: 1, r: 1, mode: mode);
        var oneSegment = new ShuffleOptions
        {
            MinWindowBytes = ShuffleWire.MaxSegmentBytes,
            InitialWindowBytes = ShuffleWire.MaxSegmentBytes,
            MaxWindowBytes = ShuffleWire.MaxSegmentBytes,
        };
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 100_000, Service = new CamdoopServiceOptions { Shuffle = oneSegment } },
        });
        Assert.True(result.Completed);
        Assert.True(result.Verified, result.VerificationError);
        Assert.Equal(0, result.Timeouts);
        Assert.True(result.ShuffleReduceSeconds < 0.1, $"{result.ShuffleReduceSeconds} s");
    }

    /// <summary>
    /// A vertex sizes its children's merger inputs for a whole window up front only while every inbound stream's
    /// reservation fits the server's budget: with R = 1 it does; with R = N on a small budget the budget is split into
    /// minimum windows and buffers grow on demand. Read mid-shuffle, while the job's streams hold the budget.
    /// </summary>
    [Theory]
    [InlineData(1, 8L * 1024 * 1024, true)]
    [InlineData(27, 256L * 1024, false)]
    public void MergerInputsAreReservedOnlyWhenTheBudgetCoversEveryWindow(int reducers, long budget, bool reserves)
    {
        var seen = new List<(int Reserve, int Window)>();
        var options = Options(s: 1, r: reducers);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 100_000, Service = new CamdoopServiceOptions { MemoryBudgetBytes = budget } },
            AtShuffleStart = (sim, t0) => sim.Schedule(t0 + (SimTime.Microsecond * 200), () =>
            {
                for (int i = 0; i < sim.Torus.Count; i++)
                {
                    var transport = sim.Host(i).GetService<CamdoopService>()!.Transport;
                    seen.Add((transport.MergerInputReserveBytes, transport.WindowBytes));
                }
            }),
        });
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        Assert.Equal(Cube.Count, seen.Count);
        var shuffle = new ShuffleOptions();
        Assert.All(seen, x => Assert.Equal(reserves ? shuffle.MaxWindowBytes : shuffle.MinWindowBytes, x.Window));
        Assert.All(seen, x => Assert.Equal(reserves ? x.Window + (x.Window / 2) : 0, x.Reserve));
    }

    /// <summary>
    /// On a ring of two (2x2x2) both ports of an axis reach the same neighbour. Enough data to fill the link queues:
    /// a frame that could not be queued once made the port's scheduler rebuild it forever (the run never ended).
    /// Each tree's frames leave on that tree's own port.
    /// </summary>
    [Theory]
    [InlineData(ShuffleMode.Camdoop)]
    [InlineData(ShuffleMode.NoAgg)]
    public void ARingOfTwoWithFullQueuesCompletesExactly(ShuffleMode mode)
    {
        var options = Options(s: 1, r: 1, mode: mode);
        var result = JobSimulation.Run(options with { Settings = options.Settings with { BytesPerServer = 200_000 }, Torus = new Torus(2, 2, 2) });
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        Assert.True(result.DataFrames > 100, $"{result.DataFrames} data frames");
    }

    [Fact]
    public void DroppedDataAckAndFinFramesAreRecovered()
    {
        int data = 0, acks = 0, fins = 0;
        var dropped = new List<string>();
        // Streams of several frames each, so that some data frames carry no FIN.
        var options = Options(r: 2);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 100_000 },
            Configure = sim => sim.DropFilter = (link, frame) =>
            {
                var what = Inspect(frame, sim.Torus);
                if (what is null)
                {
                    return false;
                }
                bool drop = what.Value.Kind switch
                {
                    ShuffleFrameKind.Data when what.Value.Fin => ++fins == 3,
                    ShuffleFrameKind.Data => ++data is 10 or 60,
                    _ => ++acks is 1 or 40,
                };
                if (drop)
                {
                    dropped.Add($"{what.Value.Kind}{(what.Value.Fin ? "+fin" : "")} on {link}");
                }
                return drop;
            },
        });
        Assert.True(5 == dropped.Count, $"data {data} acks {acks} fins {fins}: {string.Join(", ", dropped)}");
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        Assert.Equal(5, result.FramesDropped);
        Assert.True(result.RetransmittedBytes > 0);
    }

    [Fact]
    public void RandomLossOfAFewPercentStillGivesTheExactOutput()
    {
        var options = Options(Workload.WordCount, r: 4);
        var result = JobSimulation.Run(options with { Settings = options.Settings with { Seed = 11 }, LossRate = 0.03 });
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        Assert.True(result.FramesDropped > 20, $"only {result.FramesDropped} frames were lost");
        Assert.True(result.RetransmittedBytes > 0);
    }

    [Fact]
    public void MalformedCamdoopFramesAreDroppedAndCounted()
    {
        // A server that is not the root and has a child in some tree, so a well-formed segment names a real stream.
        var placement = new JobPlacement(Cube, Options().JobId, 1);
        var ports = new Port[6];
        Coordinate target = default, child = default;
        int tree = -1;
        foreach (var c in Cube.All().Where(c => c != placement.Root(0)))
        {
            for (int t = 0; t < 6 && tree < 0; t++)
            {
                if (placement.Trees.GetChildPorts(placement.Root(0), c, t, ports) > 0)
                {
                    (target, tree, child) = (c, t, Cube.Neighbour(c, ports[0]));
                }
            }
        }
        Assert.True(tree >= 0);
        ShuffleCounters? counters = null;
        var result = JobSimulation.Run(Options(r: 1) with
        {
            AtShuffleStart = (sim, t0) => sim.Schedule(t0 + 50_000, () =>
            {
                var host = sim.Host(target);
                void Inject(byte[] payload)
                {
                    var frame = sim.Frames.Rent();
                    var header = new FrameHeader(WellKnownServices.Camdoop, sim.Torus.Neighbour(target, Port.XPlus), target);
                    frame.Length = FrameCodec.Write(frame.Buffer, ref header, default, payload);
                    host.OnFrameReceived(Port.XPlus, frame);
                }
                var options = Options();
                var good = new byte[ShuffleWire.FrameHeaderSize + ShuffleWire.SegmentHeaderSize + 4];
                ShuffleWire.WriteFrameHeader(good, ShuffleFrameKind.Data, 1, options.JobId);
                ShuffleWire.WriteSegmentHeader(good.AsSpan(ShuffleWire.FrameHeaderSize), 0, tree, SegmentFlags.None, 4, child, 1_000_000);
                Inject(good[..5]); // truncated
                var version = (byte[])good.Clone();
                version[1] = 2;
                Inject(version);
                var length = (byte[])good.Clone();
                length[ShuffleWire.FrameHeaderSize + 7] = 200; // segment longer than the frame
                Inject(length);
                var coordinate = (byte[])good.Clone();
                coordinate[ShuffleWire.FrameHeaderSize + 8] = 9; // x = 9 on a 3x3x3 torus
                Inject(coordinate);
                Inject([.. good, 1, 2, 3]); // trailing bytes
                var job = (byte[])good.Clone();
                job[15] ^= 0xFF; // another job id
                Inject(job);
                var stream = (byte[])good.Clone();
                stream[ShuffleWire.FrameHeaderSize + 3] = 5; // reduce task 5 of a 1-task job
                Inject(stream);
                Inject(good); // well formed, but far beyond anything sent: out of order, re-acked
            }),
            Inspect = (_, services, _) => counters = services[Cube.IndexOf(target)].Counters,
        });
        Assert.True(result.Verified, result.VerificationError);
        Assert.NotNull(counters);
        Assert.Equal(1, counters.Malformed[(int)WireError.Truncated]);
        Assert.Equal(1, counters.Malformed[(int)WireError.WrongVersion]);
        Assert.Equal(1, counters.Malformed[(int)WireError.BadSegment]);
        Assert.Equal(1, counters.Malformed[(int)WireError.BadCoordinate]);
        Assert.Equal(1, counters.Malformed[(int)WireError.TrailingBytes]);
        Assert.Equal(1, counters.UnknownJob);
        Assert.Equal(1, counters.UnknownStream);
        Assert.True(counters.OutOfOrderSegments >= 1);
    }

    [Fact]
    public void AtSZeroEveryLinkCarriesAtMostOneStripeOfDistinctKeys()
    {
        long Largest(JobSimulationOptions options, out long stripeBound)
        {
            long largest = 0, bound = 0;
            var result = JobSimulation.Run(options with
            {
                Inspect = (_, _, jobs) =>
                {
                    foreach (var job in jobs.Select(j => j!))
                    {
                        for (int t = 0; t < 6; t++)
                        {
                            // At S = 0 every server holds every key: its own run of a stripe is the stripe's distinct keys.
                            bound = Math.Max(bound, job.MapOutputs[0].Header(0, t).PayloadBytes);
                        }
                        foreach (var vertex in job.Vertices.Cast<VertexBase>().Concat(job.RootReducers))
                        {
                            foreach (var child in vertex.Children)
                            {
                                largest = Math.Max(largest, child.Received);
                            }
                        }
                    }
                },
            });
            Assert.True(result.Verified, result.VerificationError);
            stripeBound = bound;
            return largest;
        }
        var options = Options(s: 0, r: 1);
        options = options with { Settings = options.Settings with { BytesPerServer = 30_000 } };
        long camdoop = Largest(options, out long bound);
        Assert.InRange(camdoop, bound / 2, bound);
        // Without aggregation the links near the root carry many servers' copies of the keys.
        long noAgg = Largest(options with { Mode = ShuffleMode.NoAgg }, out _);
        Assert.True(noAgg > 5 * bound, $"no-agg's busiest link carried {noAgg} bytes, the stripe bound is {bound}");
    }

    [Fact]
    public void AtSOneBothModesMoveTheSameBytes()
    {
        var camdoop = JobSimulation.Run(Options(s: 1, r: 3));
        var noAgg = JobSimulation.Run(Options(s: 1, r: 3, mode: ShuffleMode.NoAgg));
        Assert.True(camdoop.Verified, camdoop.VerificationError);
        Assert.True(noAgg.Verified, noAgg.VerificationError);
        Assert.Equal(camdoop.DataByteHops, noAgg.DataByteHops);
        Assert.Equal(camdoop.DataBytesSent, noAgg.DataBytesSent);
        Assert.Equal(camdoop.Reducers.Select(r => r.Checksum), noAgg.Reducers.Select(r => r.Checksum));
    }

    [Fact]
    public void TheBusiestLinkIsReportedAndBoundsTheShuffle()
    {
        var result = JobSimulation.Run(Options(s: 1, r: 1));
        Assert.True(result.Verified, result.VerificationError);
        // Six in-links of the single reducer share everything: the busiest carries at least a sixth of the data
        // that crosses links into it, and never more than all link bytes.
        Assert.InRange(result.BusiestLinkBytes, result.LinkBytes / (6L * result.Servers), result.LinkBytes);
        Assert.True(result.BusiestLinkBusySeconds > 0);
        // A link cannot be busy longer than the run (beacons and acks continue a little after the last reducer).
        Assert.True(result.BusiestLinkBusySeconds <= result.ShuffleReduceSeconds * 1.05,
            $"busiest link busy {result.BusiestLinkBusySeconds} s in a {result.ShuffleReduceSeconds} s shuffle");
    }

    /// <summary>
    /// Content-based priority (the Camdoop paper, §4.1): a data frame takes its job's streams lowest next key first, and a stream's
    /// next key only grows as it sends, so along a frame the first key of each fresh segment never decreases. Every
    /// stream's bytes are rebuilt from the frames sent, to know where its records start.
    /// </summary>
    [Theory]
    [InlineData(ShuffleMode.Camdoop)]
    [InlineData(ShuffleMode.NoAgg)]
    public void AFrameTakesItsSegmentsLowestNextKeyFirst(ShuffleMode mode)
    {
        var streams = new Dictionary<(int, int, Coordinate), SentStream>();
        var violations = new List<string>();
        int framesChecked = 0;
        var options = Options(s: 1, r: 7, mode: mode);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 100_000 },
            Configure = sim => sim.DropFilter = (link, frame) =>
            {
                if (FrameCodec.TryRead(frame.Span, sim.Torus, out var header) != FrameError.None || header.ServiceId != WellKnownServices.Camdoop)
                {
                    return false;
                }
                var payload = FrameCodec.Payload(frame.Span, header);
                if (ShuffleWire.TryReadHeader(payload, out var kind, out int count, out _) != WireError.None || kind != ShuffleFrameKind.Data)
                {
                    return false;
                }
                int position = ShuffleWire.FrameHeaderSize;
                var prefixes = new List<ulong>();
                for (int i = 0; i < count; i++)
                {
                    ShuffleWire.TryReadSegment(payload, ref position, sim.Torus, out var segment);
                    var id = (segment.ReduceTask, segment.Tree, segment.Child);
                    if (!streams.TryGetValue(id, out var stream))
                    {
                        streams[id] = stream = new SentStream();
                    }
                    if (stream.TryFirstPrefix((long)segment.Offset, segment.Bytes, out ulong prefix))
                    {
                        prefixes.Add(prefix);
                    }
                }
                for (int i = 1; i < prefixes.Count; i++)
                {
                    if (prefixes[i] < prefixes[i - 1])
                    {
                        violations.Add($"{link}: {string.Join(", ", prefixes.Select(p => p.ToString("x16", System.Globalization.CultureInfo.InvariantCulture)))}");
                        break;
                    }
                }
                framesChecked += prefixes.Count > 1 ? 1 : 0;
                return false;
            },
        });
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        Assert.True(violations.Count == 0, $"{violations.Count} frames out of order, first: {violations.FirstOrDefault()}");
        Assert.True(framesChecked > 100, $"only {framesChecked} frames with two or more known first keys");
    }

    /// <summary>
    /// The scheduler reads a ready stream again only after the stream marked a change; with the check on, every pick
    /// reads every stream anyway and throws where a record was out of date. Loss brings timeouts, rewinds and probes.
    /// </summary>
    [Theory]
    [InlineData(ShuffleMode.Camdoop, 27, 0.0)]
    [InlineData(ShuffleMode.NoAgg, 27, 0.03)]
    [InlineData(ShuffleMode.Camdoop, 7, 0.03)]
    public void TheSchedulersRecordsOfReadyStreamsNeverGoOutOfDate(ShuffleMode mode, int reducers, double loss)
    {
        PortScheduler.CheckRecords = true;
        try
        {
            var options = Options(s: 0.5, r: reducers, mode: mode);
            var result = JobSimulation.Run(options with { Settings = options.Settings with { BytesPerServer = 60_000, Seed = 5 }, LossRate = loss });
            Assert.True(result.Completed, string.Join("; ", result.Errors));
            Assert.True(result.Verified, result.VerificationError);
            Assert.True(loss == 0 || result.RetransmittedBytes > 0, "no loss to recover from");
        }
        finally
        {
            PortScheduler.CheckRecords = false;
        }
    }

    /// <summary>One stream's bytes as sent, reassembled in order, and where its complete records start.</summary>
    private sealed class SentStream
    {
        private readonly List<byte> _bytes = [];
        private readonly List<(long Start, ulong Prefix)> _records = [];
        private long _parsed;

        /// <summary>
        /// Takes a segment; for a fresh one (not a retransmission), the key prefix of the first record starting in it,
        /// when that record is complete: the next key its stream had when the scheduler picked it.
        /// </summary>
        public bool TryFirstPrefix(long offset, ReadOnlySpan<byte> bytes, out ulong prefix)
        {
            prefix = 0;
            long known = _bytes.Count;
            if (offset > known)
            {
                throw new InvalidOperationException($"a gap before offset {offset} in a run without loss");
            }
            if (offset + bytes.Length > known)
            {
                _bytes.AddRange(bytes[(int)(known - offset)..]);
            }
            var all = CollectionsMarshal.AsSpan(_bytes);
            while (RecordCodec.TryParse(all[(int)_parsed..], out var bounds) == RecordParseStatus.Complete)
            {
                var key = all.Slice((int)_parsed + bounds.KeyOffset, bounds.KeyLength);
                ulong p = 0;
                for (int i = 0; i < 8; i++)
                {
                    p = (p << 8) | (i < key.Length ? key[i] : 0u);
                }
                _records.Add((_parsed, p));
                _parsed += bounds.Length;
            }
            if (offset != known || bytes.IsEmpty)
            {
                return false;
            }
            int first = _records.FindIndex(r => r.Start >= offset);
            if (first < 0 || _records[first].Start >= offset + bytes.Length)
            {
                return false;
            }
            prefix = _records[first].Prefix;
            return true;
        }
    }
}

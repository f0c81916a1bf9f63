using Camdoop.KeyRouting;
using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Records;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.Shuffle;

/// <summary>The two halves of a stream against each other, with the test playing the network.</summary>
public sealed partial class StreamTests
{
    private const int Segment = ShuffleWire.MaxSegmentBytes;
    private static readonly Coordinate Child = new(1, 0, 0);

    private readonly ShuffleCounters _counters = new();

    private static OutboundStream Sender(int initialWindow = 2 * Segment, int maxWindow = 64 * 1024) =>
        new(1, 0, 2, Child, Key.FromString("parent"), Port.XMinus, initialWindow, maxWindow, new ShuffleBufferPool());

    private static InboundStream Receiver() => new(1, 0, 2, Child, Key.FromString("child"), Port.XPlus, 0);

    /// <summary>
    /// Record stream of <paramref name="count"/> records with keys k000000.. and 20-byte values, or values of
    /// <paramref name="valueLength"/>(i) bytes.
    /// </summary>
    private static byte[] Records(int count, Func<int, int>? valueLength = null)
    {
        var output = new MemoryStream();
        var record = new byte[512];
        for (int i = 0; i < count; i++)
        {
            var key = System.Text.Encoding.ASCII.GetBytes($"k{i:D6}");
            int n = RecordCodec.Write(record, key, new byte[valueLength?.Invoke(i) ?? 20]);
            output.Write(record, 0, n);
        }
        return output.ToArray();
    }

    /// <summary>The 8-byte big-endian prefix of key k{i:D6} (seven bytes and a zero).</summary>
    private static ulong KeyPrefix(int i) =>
        System.Buffers.Binary.BinaryPrimitives.ReadUInt64BigEndian(System.Text.Encoding.ASCII.GetBytes($"k{i:D6}\0"));

    private static void Fill(OutboundStream sender, byte[] data, ref int position)
    {
        while (position < data.Length)
        {
            var space = sender.DrainSpace();
            if (space.IsEmpty)
            {
                return;
            }
            int n = Math.Min(space.Length, data.Length - position);
            data.AsSpan(position, n).CopyTo(space);
            sender.CommitDrained(n);
            position += n;
        }
    }

    /// <summary>Takes one segment from the sender, as the port scheduler would.</summary>
    private byte[] Take(OutboundStream sender, long now, int room = ShuffleWire.MaxPayload - ShuffleWire.FrameHeaderSize)
    {
        var buffer = new byte[room];
        int n = sender.WriteSegment(buffer, now, _counters);
        return buffer[..n];
    }

    /// <summary>Checks a segment with the wire reader, then views it over the caller's array.</summary>
    private static DataSegment Parse(byte[] segment)
    {
        var frame = new byte[ShuffleWire.FrameHeaderSize + segment.Length];
        ShuffleWire.WriteFrameHeader(frame, ShuffleFrameKind.Data, 1, 1);
        segment.CopyTo(frame, ShuffleWire.FrameHeaderSize);
        int position = ShuffleWire.FrameHeaderSize;
        Assert.Equal(WireError.None, ShuffleWire.TryReadSegment(frame, ref position, new Torus(3, 3, 3), out var parsed));
        Assert.Equal(frame.Length, position);
        return new DataSegment(parsed.ReduceTask, parsed.Tree, parsed.Child, parsed.Offset, parsed.Flags, segment.AsSpan(ShuffleWire.SegmentHeaderSize),
            parsed.Source, parsed.Epoch);
    }

    [Fact]
    public void TheSenderStaysInsideTheWindowAndAcksOpenIt()
    {
        var data = Records(5000); // ~150 KB
        var sender = Sender();
        var receiver = Receiver();
        int filled = 0;
        Fill(sender, data, ref filled);
        Assert.True(filled > 0 && filled < data.Length, "the owner may run only a segment ahead of the window");
        var received = new MemoryStream();
        long now = 0;
        int frames = 0;
        while (!sender.IsComplete)
        {
            Assert.True(frames++ < 10_000);
            while (sender.HasSendable)
            {
                Assert.True(sender.SendOffset < 2 * Segment || sender.SendOffset <= receiver.AdvertisedEdge || receiver.AdvertisedEdge == 0,
                    "sent beyond the advertised window");
                var seg = Parse(Take(sender, now));
                Assert.True((long)seg.Offset + seg.Bytes.Length <= Math.Max(2 * Segment, receiver.AdvertisedEdge));
                var outcome = receiver.Receive(seg, 4 * Segment, out var fresh, out _, out _);
                Assert.Equal(ReceiveOutcome.Accepted, outcome);
                received.Write(fresh);
            }
            // The merger consumes everything; the receiver acks with its window.
            receiver.Consumed = receiver.Received;
            var ack = receiver.TakeAck(32 * 1024);
            Assert.True(sender.OnAck((long)ack.Offset, ack.Window, ack.Flags, now += 100_000, out long rtt, out _));
            Assert.True(rtt > 0);
            Fill(sender, data, ref filled);
            if (filled == data.Length && !sender.SourceDone)
            {
                sender.EndSource();
            }
        }
        Assert.Equal(data, received.ToArray());
        Assert.True(receiver.FinReceived);
    }

    [Fact]
    public void ALostSegmentIsResentAfterAGapAck()
    {
        var data = Records(1000);
        var sender = Sender(initialWindow: 8 * Segment);
        sender.UseExternal(data);
        var receiver = Receiver();
        var lost = Parse(Take(sender, 0));
        Assert.Equal(0UL, lost.Offset);
        var second = Parse(Take(sender, 0));
        Assert.Equal(ReceiveOutcome.OutOfOrder, receiver.Receive(second, 4 * Segment, out _, out _, out bool ackNow));
        Assert.True(ackNow);
        var ack = receiver.TakeAck(64 * 1024);
        Assert.Equal(AckFlags.Gap, ack.Flags & AckFlags.Gap);
        Assert.Equal(0UL, ack.Offset);
        sender.OnAck((long)ack.Offset, ack.Window, ack.Flags, 1, out _, out _);
        // Go-back-N: the next segment starts at the lost one again.
        Assert.Equal(0, sender.SendOffset);
        var resent = Parse(Take(sender, 2));
        Assert.Equal(lost.Bytes.ToArray(), resent.Bytes.ToArray());
        Assert.True(_counters.RetransmittedBytes >= resent.Bytes.Length);
        // A second Gap ack for the same hole (from a segment sent before the rewind) does not rewind again.
        long before = sender.SendOffset;
        sender.OnAck(0, ack.Window, AckFlags.Gap, 3, out _, out _);
        Assert.Equal(before, sender.SendOffset);
    }

    [Fact]
    public void DuplicatesAndOverlapsAreRecognised()
    {
        var data = Records(600);
        var sender = Sender(initialWindow: 8 * Segment);
        sender.UseExternal(data);
        var receiver = Receiver();
        var first = Parse(Take(sender, 0, room: ShuffleWire.SegmentHeaderSize + 1000));
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(first, 4 * Segment, out var fresh, out _, out _));
        Assert.Equal(1000, fresh.Length);
        Assert.Equal(ReceiveOutcome.Duplicate, receiver.Receive(first, 4 * Segment, out _, out _, out bool ackNow));
        Assert.True(ackNow);
        // A retransmission that overlaps what is held and adds more: only the new tail counts.
        sender.Rewind();
        sender.OnAck(500, 64 * 1024, AckFlags.None, 1, out _, out _);
        var overlap = Parse(Take(sender, 2, room: ShuffleWire.SegmentHeaderSize + 1000));
        Assert.Equal(500UL, overlap.Offset);
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(overlap, 4 * Segment, out fresh, out _, out _));
        Assert.Equal(500, fresh.Length);
        Assert.Equal(data.AsSpan(1000, 500).ToArray(), fresh.ToArray());
        Assert.Equal(1500, receiver.Received);
    }

    [Fact]
    public void AClosedWindowIsProbedAndATimeoutGoesBack()
    {
        var data = Records(2000);
        var sender = Sender(initialWindow: Segment);
        sender.UseExternal(data);
        Take(sender, 0);
        Assert.False(sender.HasSendable);
        Assert.True(sender.HasInFlight);
        long rto = 10_000_000;
        Assert.Equal(rto, sender.Deadline(rto, 50_000_000));
        // The first timeout only probes (the receiver may not have acked a quiet stream yet).
        Assert.False(sender.OnTimeout(rto));
        Assert.Equal(Segment, sender.SendOffset);
        Assert.Equal(2 * rto, sender.Deadline(rto, 50_000_000));
        // No progress after the probe either: go back and double the timeout.
        Assert.True(sender.OnTimeout(2 * rto));
        Assert.Equal(0, sender.SendOffset);
        Assert.Equal(1, sender.Backoff);
        Assert.Equal((2 * rto) + (2 * rto), sender.Deadline(rto, 50_000_000)); // doubled
        Assert.Equal((2 * rto) + rto + 1, sender.Deadline(rto, 50_000_000, maxWait: rto + 1)); // never beyond the cap
        Take(sender, rto + 1);
        // Everything acknowledged but the window stays shut: the stream is blocked and waits for a probe.
        sender.OnAck(Segment, 0, AckFlags.None, rto + 2, out _, out bool progress);
        Assert.True(progress);
        Assert.True(sender.IsWindowBlocked);
        Assert.Equal(rto + 2 + 50_000_000, sender.Deadline(rto, 50_000_000));
        var probe = new byte[ShuffleWire.SegmentHeaderSize];
        Assert.Equal(ShuffleWire.SegmentHeaderSize, sender.WriteProbe(probe, _counters));
        var parsed = Parse(probe);
        Assert.Equal(SegmentFlags.Probe | SegmentFlags.AckNow, parsed.Flags);
        Assert.Equal((ulong)Segment, parsed.Offset);
        // The receiver answers a probe as a duplicate, with its window.
        var receiver = Receiver();
        Assert.Equal(ReceiveOutcome.OutOfOrder, receiver.Receive(parsed, 4 * Segment, out _, out _, out bool ackNow));
        Assert.True(ackNow);
    }

    [Fact]
    public void AWindowShutForLongIsStillProbedEveryFewSeconds()
    {
        var sender = Sender(initialWindow: Segment);
        sender.UseExternal(Records(2000));
        Take(sender, 0);
        sender.OnAck(Segment, 0, AckFlags.None, 1, out _, out _);
        Assert.True(sender.IsWindowBlocked);
        long rto = 1_000_000_000, probeInterval = 50_000_000, maxWait = 4_000_000_000;
        // Twenty probes, each answered with the window still shut: the wait doubles up to the cap, not to 2^10 RTOs.
        long now = 1;
        for (int i = 0; i < 20; i++)
        {
            long deadline = sender.Deadline(rto, probeInterval, maxWait);
            Assert.InRange(deadline - now, rto, maxWait);
            now = deadline;
            sender.OnProbeSent(now);
        }
        Assert.Equal(now + maxWait, sender.Deadline(rto, probeInterval, maxWait));
    }

    [Fact]
    public void TheFinCompletesTheStreamAndReleasesIt()
    {
        var sender = Sender();
        sender.EndSource(); // an empty stream: FIN only
        Assert.True(sender.HasSendable);
        var fin = Parse(Take(sender, 0));
        Assert.Equal(SegmentFlags.Fin | SegmentFlags.AckNow, fin.Flags);
        var receiver = Receiver();
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(fin, 4 * Segment, out var fresh, out bool finished, out _));
        Assert.True(finished);
        Assert.Equal(0, fresh.Length);
        var ack = receiver.TakeAck(Segment);
        Assert.Equal(AckFlags.FinReceived, ack.Flags);
        sender.OnAck((long)ack.Offset, ack.Window, ack.Flags, 1, out _, out _);
        Assert.True(sender.IsComplete);
        Assert.False(sender.HasSendable);
        // A late duplicate FIN is still answered, as complete.
        Assert.Equal(ReceiveOutcome.Duplicate, receiver.Receive(fin, 4 * Segment, out _, out _, out _));
        Assert.Equal(AckFlags.FinReceived, receiver.TakeAck(Segment).Flags);
    }

    [Fact]
    public void ALostFinIsSentAgainWhenTheProbeAfterItComesBackWithoutIt()
    {
        var sender = Sender();
        sender.EndSource(); // a restart with nothing left to send: FIN only
        Take(sender, 0); // lost on the way
        Assert.True(sender.HasInFlight);
        long rto = 10_000_000;
        // The timer probes first; the receiver answers the probe, without FinReceived since it never saw the FIN.
        Assert.False(sender.OnTimeout(rto));
        var probe = new byte[ShuffleWire.SegmentHeaderSize];
        sender.WriteProbe(probe, _counters);
        sender.OnProbeSent(rto);
        var receiver = Receiver();
        receiver.Receive(Parse(probe), 4 * Segment, out _, out _, out bool ackNow);
        Assert.True(ackNow);
        var ack = receiver.TakeAck(Segment);
        Assert.Equal(AckFlags.None, ack.Flags);
        Assert.True(sender.OnAck((long)ack.Offset, ack.Window, ack.Flags, rto + 1, out _, out _));
        // The FIN goes again at once, not after a second, doubled timeout.
        Assert.True(sender.HasSendable);
        var fin = Parse(Take(sender, rto + 2));
        Assert.NotEqual(SegmentFlags.None, fin.Flags & SegmentFlags.Fin);
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(fin, 4 * Segment, out _, out bool finished, out _));
        Assert.True(finished);
        sender.OnAck(0, Segment, receiver.TakeAck(Segment).Flags, rto + 3, out _, out _);
        Assert.True(sender.IsComplete);
    }

    [Fact]
    public void AnAckWithoutTheFinBeforeAnyProbeIsNotALoss()
    {
        var sender = Sender();
        sender.EndSource();
        Take(sender, 0);
        // An ack that left the receiver before the FIN arrived (a window update crossing it) says nothing of the FIN.
        Assert.True(sender.OnAck(0, (uint)Segment, AckFlags.None, 1, out _, out _));
        Assert.False(sender.HasSendable);
        Assert.True(sender.HasInFlight);
    }

    [Fact]
    public void AcksForBytesNeverSentAreRefused()
    {
        var sender = Sender();
        sender.UseExternal(Records(10));
        Assert.False(sender.OnAck(5, 100, AckFlags.None, 0, out _, out _));
        Take(sender, 0);
        Assert.True(sender.OnAck(5, 100, AckFlags.None, 0, out _, out _));
    }

    [Fact]
    public void WindowUpdatesGoOutEveryQuarterWindowConsumed()
    {
        var receiver = Receiver();
        receiver.TakeAck(8 * Segment); // advertised edge = 8 segments
        receiver.Consumed = Segment;
        Assert.False(receiver.WantsWindowUpdate(8 * Segment)); // one segment: not yet
        receiver.Consumed = 2 * Segment;
        Assert.True(receiver.WantsWindowUpdate(8 * Segment)); // a quarter window
        var ack = receiver.TakeAck(8 * Segment);
        Assert.Equal(10u * Segment, ack.Window);
        Assert.False(receiver.WantsWindowUpdate(8 * Segment));
        // Small windows still update at least a segment at a time.
        var small = Receiver();
        small.TakeAck(2 * Segment);
        small.Consumed = Segment - 1;
        Assert.False(small.WantsWindowUpdate(2 * Segment));
        small.Consumed = Segment;
        Assert.True(small.WantsWindowUpdate(2 * Segment));
        // A one-segment window reopens at half a segment: a record straddling its edge cannot be consumed yet.
        var tiny = Receiver();
        tiny.TakeAck(Segment);
        tiny.Consumed = (Segment / 2) - 1;
        Assert.False(tiny.WantsWindowUpdate(Segment));
        tiny.Consumed = Segment - 40;
        Assert.True(tiny.WantsWindowUpdate(Segment));
    }

    [Fact]
    public void TheNextKeyPrefixFollowsTheSentRecords()
    {
        var data = Records(3000);
        var sender = Sender(initialWindow: 64 * 1024);
        sender.TracksPriority = true;
        sender.UseExternal(data);
        Assert.Equal(KeyPrefix(0), sender.NextKeyPrefix);
        var seg = Parse(Take(sender, 0));
        // Records are 29 bytes: the first record starting at or after the segment's end.
        int next = (seg.Bytes.Length + 28) / 29;
        Assert.Equal(KeyPrefix(next), sender.NextKeyPrefix);
    }

    [Fact]
    public void TheNextKeyPrefixStepsOverShortAndLongHeaders()
    {
        // Values of 20 and 200 bytes: one-byte and two-byte length headers, so the walker takes both of its paths.
        static int ValueLength(int i) => i % 3 == 0 ? 200 : 20;
        var data = Records(2000, ValueLength);
        var starts = new List<int>();
        for (int i = 0, at = 0; i < 2000; at += RecordCodec.EncodedLength(7, ValueLength(i)), i++)
        {
            starts.Add(at);
        }
        var sender = Sender(initialWindow: 64 * 1024);
        sender.TracksPriority = true;
        sender.UseExternal(data);
        Assert.Equal(KeyPrefix(0), sender.NextKeyPrefix);
        int sent = 0;
        for (int round = 0; round < 4; round++)
        {
            sent += Parse(Take(sender, 0)).Bytes.Length;
            int next = starts.FindIndex(start => start >= sent);
            Assert.Equal(KeyPrefix(next), sender.NextKeyPrefix);
        }
    }

    [Fact]
    public void OnlyAShortStreamWhoseParentKeepsUpGoesInHalfFrames()
    {
        var data = Records(40_000); // ~1.1 MB, beyond PortScheduler.ShortStreamBytes
        var sender = Sender(initialWindow: 64 * 1024, maxWindow: 64 * 1024);
        sender.UseExternal(data);
        Assert.Equal(PortScheduler.ShortFramePayload, PortScheduler.FrameRoom(sender));

        // The parent stops consuming: once half the window is in flight, the bytes wait anyway, so frames are full.
        while (sender.WindowRoom >= 32 * 1024)
        {
            Assert.Equal(PortScheduler.ShortFramePayload, PortScheduler.FrameRoom(sender));
            Take(sender, 0, PortScheduler.ShortFramePayload - ShuffleWire.FrameHeaderSize);
        }
        Assert.Equal(ShuffleWire.MaxPayload, PortScheduler.FrameRoom(sender));

        // The parent keeps up (everything acked, the window open again) until the stream has carried 512 KB.
        long now = 0;
        while (sender.SentHigh < PortScheduler.ShortStreamBytes)
        {
            Assert.True(sender.OnAck(sender.SentHigh, 64 * 1024, AckFlags.None, now += 1000, out _, out _));
            Assert.Equal(PortScheduler.ShortFramePayload, PortScheduler.FrameRoom(sender));
            Take(sender, now, PortScheduler.ShortFramePayload - ShuffleWire.FrameHeaderSize);
        }
        Assert.True(sender.OnAck(sender.SentHigh, 64 * 1024, AckFlags.None, now + 1000, out _, out _));
        Assert.Equal(ShuffleWire.MaxPayload, PortScheduler.FrameRoom(sender));
    }

    [Fact]
    public void AStashKeepsRoomForAMergerToAdoptItAndCanBeHandedOver()
    {
        var pool = new ShuffleBufferPool();
        var receiver = Receiver();
        var data = Records(300);
        var random = new Random(5);
        int stashed = 0;
        while (stashed < data.Length)
        {
            int chunk = Math.Min(data.Length - stashed, random.Next(1, 2000));
            receiver.Stash(data.AsSpan(stashed, chunk), pool);
            stashed += chunk;
            Assert.True(data.AsSpan(0, stashed).SequenceEqual(receiver.Stashed));
            Assert.True(receiver.StashBuffer!.Length - stashed >= InboundStream.StashSlackBytes);
        }
        long rented = pool.RentedBytes;
        Assert.Equal(receiver.StashBuffer!.Length, rented); // every outgrown stash went back
        receiver.HandOverStash();
        Assert.Null(receiver.StashBuffer);
        Assert.True(receiver.Stashed.IsEmpty);
        Assert.Equal(rented, pool.RentedBytes); // its new owner returns it, not the stream
    }
}

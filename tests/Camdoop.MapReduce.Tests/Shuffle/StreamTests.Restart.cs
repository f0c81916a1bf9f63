using Camdoop.KeyRouting;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Records;

namespace Camdoop.MapReduce.Tests.Shuffle;

/// <summary>Restarting a stream after a failure: what the sender replays and which segments the receiver takes.</summary>
public sealed partial class StreamTests
{
    /// <summary>The keys of the complete records of <paramref name="data"/>, in order.</summary>
    private static List<string> KeysOf(ReadOnlySpan<byte> data)
    {
        var keys = new List<string>();
        int position = 0;
        while (RecordCodec.TryParse(data[position..], out var bounds) == RecordParseStatus.Complete)
        {
            keys.Add(System.Text.Encoding.ASCII.GetString(data.Slice(position + bounds.KeyOffset, bounds.KeyLength)));
            position += bounds.Length;
        }
        return keys;
    }

    [Fact]
    public void AParentThatLostItsChildTakesOnlyTheRestartItAskedFor()
    {
        var data = Records(2000);
        var sender = Sender(initialWindow: 16 * Segment);
        sender.UseExternal(data);
        var receiver = Receiver();
        receiver.TrackRecords();
        var held = new MemoryStream();

        // Epoch 0 delivers two segments; then the parent regenerates and asks for everything again (epoch 1).
        for (int i = 0; i < 2; i++)
        {
            Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(Parse(Take(sender, 0)), 4 * Segment, out _, out _, out _));
        }
        receiver.Restart(ResumePoint.Start, new Buffers.ShuffleBufferPool());
        Assert.True(sender.TryRestartAt(ResumePoint.Start, null, epoch: 1));
        for (int i = 0; i < 3; i++)
        {
            var segment = Parse(Take(sender, 0));
            Assert.Equal((byte)1, segment.Epoch);
            Assert.Equal(i == 0, (segment.Flags & SegmentFlags.Restart) != 0);
            Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(segment, 4 * Segment, out var fresh, out _, out _));
            held.Write(fresh);
        }
        Assert.Equal((byte)1, receiver.Epoch);

        // The child's server is lost: the parent keeps the complete records it holds and waits for a restart after them.
        var tail = receiver.Tail!;
        long complete = tail.CompleteEnd;
        Assert.True(complete > 0 && complete <= held.Length);
        receiver.BeginResume(tail.Point, complete);
        Assert.NotNull(receiver.PendingResume);

        // Epoch 1's first segment, sent again late, carries the restart flag at offset 0: it is what the request
        // replaces, so it is stale.
        sender.Rewind();
        var late = Parse(Take(sender, 0));
        Assert.Equal(0UL, late.Offset);
        Assert.NotEqual(SegmentFlags.None, late.Flags & SegmentFlags.Restart);
        Assert.Equal(ReceiveOutcome.Stale, receiver.Receive(late, 4 * Segment, out _, out _, out _));
        Assert.NotNull(receiver.PendingResume);

        // The new owner restarts after the point as epoch 2: taken, and the records line up with no gap or repeat.
        Assert.True(sender.TryRestartAt(tail.Point, null, epoch: 2));
        var restart = Parse(Take(sender, 0));
        Assert.Equal((byte)2, restart.Epoch);
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(restart, 4 * Segment, out var first, out _, out _));
        Assert.Null(receiver.PendingResume);
        Assert.Equal((byte)2, receiver.Epoch);
        var joined = new MemoryStream();
        joined.Write(held.GetBuffer(), 0, (int)complete);
        joined.Write(first);
        var got = KeysOf(joined.ToArray());
        Assert.True(got.Count > KeysOf(held.ToArray().AsSpan(0, (int)complete)).Count, "the restart brought new records");
        Assert.Equal(KeysOf(data).Take(got.Count), got);
    }

    [Fact]
    public void ARestartOfAnotherGenerationOrAnEarlierEpochIsStale()
    {
        var data = Records(200);
        var sender = Sender();
        sender.UseExternal(data);
        var receiver = new InboundStream(1, 0, 2, Child, Key.FromString("child"), Runtime.Topology.Port.XPlus, 0, epoch: 16);
        receiver.TrackRecords();
        receiver.BeginResume(ResumePoint.Start, 0);

        // Generation 0's restart (epoch 1) reaches a parent of generation 1 (epochs 16..31).
        Assert.True(sender.TryRestartAt(ResumePoint.Start, null, epoch: 1));
        Assert.Equal(ReceiveOutcome.Stale, receiver.Receive(Parse(Take(sender, 0)), 4 * Segment, out _, out _, out _));
        // Generation 1's first epoch is the one the parent asked to replace.
        Assert.True(sender.TryRestartAt(ResumePoint.Start, null, epoch: 16));
        Assert.Equal(ReceiveOutcome.Stale, receiver.Receive(Parse(Take(sender, 0)), 4 * Segment, out _, out _, out _));
        // Its next epoch answers the request.
        Assert.True(sender.TryRestartAt(ResumePoint.Start, null, epoch: 17));
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(Parse(Take(sender, 0)), 4 * Segment, out _, out _, out _));
        Assert.Equal((byte)17, receiver.Epoch);
    }

    [Fact]
    public void ARestartWhoseFirstSegmentIsLostBeginsWithTheNextAndAsksForTheFirstAtOnce()
    {
        var data = Records(2000);
        var sender = Sender(initialWindow: 8 * Segment);
        sender.UseExternal(data);
        var receiver = Receiver();
        receiver.TrackRecords();
        receiver.Restart(ResumePoint.Start, new Buffers.ShuffleBufferPool());
        Assert.True(sender.TryRestartAt(ResumePoint.Start, null, epoch: 1));

        // The first segment of the restart (the one with the restart flag) is dropped by a full queue on the way.
        var lost = Parse(Take(sender, 0));
        Assert.NotEqual(SegmentFlags.None, lost.Flags & SegmentFlags.Restart);
        var second = Parse(Take(sender, 0));
        Assert.Equal(SegmentFlags.None, second.Flags & SegmentFlags.Restart);

        // The second begins the restart: the receiver takes epoch 1 and answers with a gap ack at once.
        Assert.Equal(ReceiveOutcome.OutOfOrder, receiver.Receive(second, 4 * Segment, out _, out _, out bool ackNow));
        Assert.True(ackNow);
        Assert.Null(receiver.PendingResume);
        Assert.Equal((byte)1, receiver.Epoch);
        var ack = receiver.TakeAck(8 * Segment);
        Assert.Equal((byte)1, ack.Epoch);
        Assert.Equal(0UL, ack.Offset);
        Assert.Equal(AckFlags.Gap, ack.Flags);

        // The gap ack sends the sender back to the start: the first segment comes again and is taken.
        Assert.True(sender.OnAck((long)ack.Offset, ack.Window, ack.Flags, 1, out _, out _));
        Assert.Equal(0, sender.SendOffset);
        var again = Parse(Take(sender, 2));
        Assert.Equal(0UL, again.Offset);
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(again, 4 * Segment, out var fresh, out _, out _));
        Assert.Equal(data.AsSpan(0, fresh.Length).ToArray(), fresh.ToArray());
    }

    [Fact]
    public void AStreamRestartsFromKeptBytesOnlyWhenTheyReachBackToThePoint()
    {
        var data = Records(3000); // ~90 KB
        var pool = new Buffers.ShuffleBufferPool();
        OutboundStream NewSender() => new(1, 0, 2, Child, Key.FromString("parent"), Runtime.Topology.Port.XMinus, 64 * 1024, 64 * 1024, pool);

        // Without retention nothing is kept once acknowledged: the owner must regenerate, and nothing changes.
        var bare = NewSender();
        SendAcked(bare, data, noteEvery: 0);
        Assert.False(bare.TryRestartAt(ResumePoint.Start, null, epoch: 1));
        Assert.Equal((byte)0, bare.Epoch);

        // Retention covering everything sent: a restart from the start replays exactly what was sent.
        var keeping = NewSender();
        keeping.SetRetention(data.Length * 2L);
        SendAcked(keeping, data, noteEvery: 0);
        Assert.True(keeping.TryRestartAt(ResumePoint.Start, null, epoch: 1));
        Assert.Equal((byte)1, keeping.Epoch);
        Assert.Equal(data, Replay(keeping));

        // Retention of the last 16 KB, record starts noted as the owner writes: the start is out of reach, a key a few
        // KB before the acknowledged end is not, and the replay starts at the record after it.
        var recent = NewSender();
        recent.SetRetention(16 * 1024);
        SendAcked(recent, data, noteEvery: 1);
        Assert.False(recent.TryRestartAt(ResumePoint.Start, null, epoch: 1));
        var keys = KeysOf(data);
        int resumeAfter = keys.Count - 100; // ~3 KB before the end
        var point = ResumePoint.After(System.Text.Encoding.ASCII.GetBytes(keys[resumeAfter]), 1); // its one record is held
        Assert.True(recent.TryRestartAt(point, null, epoch: 1));
        Assert.Equal(keys.Skip(resumeAfter + 1), KeysOf(Replay(recent)));
    }

    [Fact]
    public void TheAnswerToAnEarlierRequestIsStaleOnceTheParentAskedAgain()
    {
        var data = Records(200);
        var receiver = new InboundStream(1, 0, 2, Child, Key.FromString("child"), Runtime.Topology.Port.XPlus, 0, epoch: 16);
        receiver.TrackRecords();
        receiver.Restart(ResumePoint.Start, new Buffers.ShuffleBufferPool());
        Assert.Equal((byte)16, receiver.RequestEpoch);

        // The parent asks again, from a key far ahead, before the first answer arrived: it names one epoch more.
        var point = ResumePoint.After(System.Text.Encoding.ASCII.GetBytes(KeysOf(data)[150]), ResumePoint.SkipAll);
        receiver.Restart(point, new Buffers.ShuffleBufferPool());
        Assert.Equal((byte)17, receiver.RequestEpoch);

        // The child answered the first request as epoch 17 (from the start): that answer is not taken.
        var first = Sender();
        first.UseExternal(data);
        Assert.True(first.TryRestartAt(ResumePoint.Start, null, epoch: 17));
        Assert.Equal(ReceiveOutcome.Stale, receiver.Receive(Parse(Take(first, 0)), 4 * Segment, out _, out _, out _));
        // Its answer to the second (one past the epoch named) is, and it starts after the point.
        var second = Sender();
        second.UseExternal(data);
        Assert.True(second.TryRestartAt(point, null, epoch: 18));
        Assert.Equal(ReceiveOutcome.Accepted, receiver.Receive(Parse(Take(second, 0)), 4 * Segment, out var fresh, out _, out _));
        Assert.Equal(KeysOf(data)[151], KeysOf(fresh.ToArray())[0]);
    }

    [Fact]
    public void APointBeyondEverythingProducedIsNotServedFromKeptBytes()
    {
        var data = Records(3000);
        var keys = KeysOf(data);
        var half = data.AsSpan(0, data.Length / 2).ToArray();
        int produced = KeysOf(half).Count;
        var sender = new OutboundStream(1, 0, 2, Child, Key.FromString("parent"), Runtime.Topology.Port.XMinus, 64 * 1024, 64 * 1024, new Buffers.ShuffleBufferPool());
        sender.SetRetention(data.Length * 2L);
        var whole = half.AsSpan(0, RecordsEnd(half)).ToArray();
        SendAcked(sender, whole, noteEvery: 0);

        // The source still runs: records it has yet to produce may come before the point, so it must regenerate.
        var ahead = ResumePoint.After(System.Text.Encoding.ASCII.GetBytes(keys[produced + 500]), ResumePoint.SkipAll);
        Assert.False(sender.TryRestartAt(ahead, null, epoch: 1));
        Assert.Equal((byte)0, sender.Epoch);
        // A point inside what was produced is still served from the kept bytes.
        var inside = ResumePoint.After(System.Text.Encoding.ASCII.GetBytes(keys[10]), ResumePoint.SkipAll);
        Assert.True(sender.TryRestartAt(inside, null, epoch: 1));
    }

    private static int RecordsEnd(ReadOnlySpan<byte> data)
    {
        int end = 0;
        while (RecordCodec.TryParse(data[end..], out var bounds) == RecordParseStatus.Complete)
        {
            end += bounds.Length;
        }
        return end;
    }

    /// <summary>
    /// Writes all of <paramref name="data"/> into <paramref name="sender"/> (noting every record start when
    /// <paramref name="noteEvery"/> is 1), sending and acknowledging it all, without ending the stream.
    /// </summary>
    private void SendAcked(OutboundStream sender, byte[] data, int noteEvery)
    {
        int filled = 0;
        int rounds = 0;
        while (sender.Acknowledged < data.Length)
        {
            Assert.True(rounds++ < 100_000);
            while (filled < data.Length)
            {
                var space = sender.DrainSpace();
                if (space.IsEmpty)
                {
                    break;
                }
                Assert.Equal(RecordParseStatus.Complete, RecordCodec.TryParse(data.AsSpan(filled), out var bounds));
                if (bounds.Length > space.Length)
                {
                    break;
                }
                if (noteEvery > 0)
                {
                    sender.NoteRecordBoundary(filled);
                }
                data.AsSpan(filled, bounds.Length).CopyTo(space);
                sender.CommitDrained(bounds.Length);
                filled += bounds.Length;
            }
            while (sender.HasSendable)
            {
                var segment = Parse(Take(sender, 0));
                sender.OnAck((long)segment.Offset + segment.Bytes.Length, 64 * 1024, AckFlags.None, 1, out _, out _);
            }
        }
    }

    /// <summary>Everything the sender sends from its current offset, each segment acknowledged.</summary>
    private byte[] Replay(OutboundStream sender)
    {
        var replay = new MemoryStream();
        while (sender.HasSendable)
        {
            var segment = Parse(Take(sender, 0));
            replay.Write(segment.Bytes);
            sender.OnAck((long)segment.Offset + segment.Bytes.Length, 64 * 1024, AckFlags.None, 1, out _, out _);
        }
        return replay.ToArray();
    }
}

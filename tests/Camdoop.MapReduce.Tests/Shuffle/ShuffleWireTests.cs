using System.Buffers.Binary;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.Shuffle;

public sealed class ShuffleWireTests
{
    private static readonly Torus Cube = new(4, 4, 4);

    private static byte[] DataFrame(params (int R, int Tree, Coordinate Child, ulong Offset, SegmentFlags Flags, byte[] Bytes)[] segments)
    {
        var frame = new byte[ShuffleWire.MaxPayload];
        int position = ShuffleWire.FrameHeaderSize;
        foreach (var s in segments)
        {
            ShuffleWire.WriteSegmentHeader(frame.AsSpan(position), s.R, s.Tree, s.Flags, s.Bytes.Length, s.Child, s.Offset);
            s.Bytes.CopyTo(frame.AsSpan(position + ShuffleWire.SegmentHeaderSize));
            position += ShuffleWire.SegmentHeaderSize + s.Bytes.Length;
        }
        ShuffleWire.WriteFrameHeader(frame, ShuffleFrameKind.Data, segments.Length, 0xABCDEF);
        return frame[..position];
    }

    [Fact]
    public void DataSegmentsRoundTrip()
    {
        var frame = DataFrame(
            (7, 3, new Coordinate(1, 2, 3), 123_456_789_012, SegmentFlags.AckNow, [1, 2, 3]),
            (0, 5, new Coordinate(3, 3, 3), 0, SegmentFlags.Fin | SegmentFlags.AckNow, []));
        Assert.Equal(WireError.None, ShuffleWire.TryReadHeader(frame, out var kind, out int count, out ulong job));
        Assert.Equal((ShuffleFrameKind.Data, 2, 0xABCDEFUL), (kind, count, job));
        int position = ShuffleWire.FrameHeaderSize;
        Assert.Equal(WireError.None, ShuffleWire.TryReadSegment(frame, ref position, Cube, out var first));
        Assert.Equal((7, 3, new Coordinate(1, 2, 3), 123_456_789_012UL, SegmentFlags.AckNow), (first.ReduceTask, first.Tree, first.Child, first.Offset, first.Flags));
        Assert.Equal([1, 2, 3], first.Bytes.ToArray());
        Assert.Equal(WireError.None, ShuffleWire.TryReadSegment(frame, ref position, Cube, out var second));
        Assert.Equal((0, 5, SegmentFlags.Fin | SegmentFlags.AckNow, 0), (second.ReduceTask, second.Tree, second.Flags, second.Bytes.Length));
        Assert.Equal(frame.Length, position);
    }

    [Fact]
    public void AcksRoundTrip()
    {
        var frame = new byte[ShuffleWire.FrameHeaderSize + (2 * ShuffleWire.AckEntrySize)];
        var a = new AckEntry(511, 0, new Coordinate(0, 1, 2), 99, 65_536, AckFlags.Gap);
        var b = new AckEntry(3, 5, new Coordinate(3, 0, 0), ulong.MaxValue >> 1, uint.MaxValue, AckFlags.FinReceived);
        ShuffleWire.WriteFrameHeader(frame, ShuffleFrameKind.Ack, 2, 42);
        ShuffleWire.WriteAck(frame.AsSpan(ShuffleWire.FrameHeaderSize), a);
        ShuffleWire.WriteAck(frame.AsSpan(ShuffleWire.FrameHeaderSize + ShuffleWire.AckEntrySize), b);
        Assert.Equal(WireError.None, ShuffleWire.TryReadHeader(frame, out var kind, out int count, out _));
        Assert.Equal((ShuffleFrameKind.Ack, 2), (kind, count));
        int position = ShuffleWire.FrameHeaderSize;
        Assert.Equal(WireError.None, ShuffleWire.TryReadAck(frame, ref position, Cube, out var readA));
        Assert.Equal(WireError.None, ShuffleWire.TryReadAck(frame, ref position, Cube, out var readB));
        Assert.Equal(a, readA);
        Assert.Equal(b, readB);
    }

    [Fact]
    public void MalformedHeadersAreRejectedWithTheirReason()
    {
        var good = DataFrame((1, 1, new Coordinate(0, 0, 0), 0, SegmentFlags.None, [9]));
        Assert.Equal(WireError.Truncated, ShuffleWire.TryReadHeader(good.AsSpan(0, 10), out _, out _, out _));
        var version = (byte[])good.Clone();
        version[1] = 9;
        Assert.Equal(WireError.WrongVersion, ShuffleWire.TryReadHeader(version, out _, out _, out _));
        var kind = (byte[])good.Clone();
        kind[0] = 7;
        Assert.Equal(WireError.UnknownKind, ShuffleWire.TryReadHeader(kind, out _, out _, out _));
        var count = (byte[])good.Clone();
        BinaryPrimitives.WriteUInt16BigEndian(count.AsSpan(2), 500);
        Assert.Equal(WireError.BadCount, ShuffleWire.TryReadHeader(count, out _, out _, out _));
        var zero = (byte[])good.Clone();
        BinaryPrimitives.WriteUInt16BigEndian(zero.AsSpan(2), 0);
        Assert.Equal(WireError.BadCount, ShuffleWire.TryReadHeader(zero, out _, out _, out _));
        var reserved = (byte[])good.Clone();
        reserved[5] = 1;
        Assert.Equal(WireError.BadFlags, ShuffleWire.TryReadHeader(reserved, out _, out _, out _));
        var ack = new byte[ShuffleWire.FrameHeaderSize + ShuffleWire.AckEntrySize + 3];
        ShuffleWire.WriteFrameHeader(ack, ShuffleFrameKind.Ack, 1, 1);
        Assert.Equal(WireError.BadCount, ShuffleWire.TryReadHeader(ack, out _, out _, out _));
    }

    [Fact]
    public void MalformedSegmentsAreRejectedWithTheirReason()
    {
        WireError Read(byte[] frame)
        {
            int position = ShuffleWire.FrameHeaderSize;
            return ShuffleWire.TryReadSegment(frame, ref position, Cube, out _);
        }
        var good = DataFrame((1, 1, new Coordinate(0, 0, 0), 0, SegmentFlags.None, [9, 9]));
        var longer = (byte[])good.Clone();
        BinaryPrimitives.WriteUInt16BigEndian(longer.AsSpan(ShuffleWire.FrameHeaderSize + 6), 3);
        Assert.Equal(WireError.BadSegment, Read(longer));
        var tree = (byte[])good.Clone();
        tree[ShuffleWire.FrameHeaderSize + 4] = 7; // six trees, then a root reducer's stream to its output's replica
        Assert.Equal(WireError.BadSegment, Read(tree));
        tree[ShuffleWire.FrameHeaderSize + 4] = 6;
        Assert.Equal(WireError.None, Read(tree));
        var flags = (byte[])good.Clone();
        flags[ShuffleWire.FrameHeaderSize + 5] = 0x80;
        Assert.Equal(WireError.BadFlags, Read(flags));
        var coordinate = (byte[])good.Clone();
        coordinate[ShuffleWire.FrameHeaderSize + 9] = 4; // y = 4 on a 4x4x4 torus
        Assert.Equal(WireError.BadCoordinate, Read(coordinate));
        Assert.Equal(WireError.Truncated, Read(good[..(ShuffleWire.FrameHeaderSize + 10)]));
    }

    [Fact]
    public void TheFirstWordCarriesTheSourceAboveA24BitReduceTaskAndByte11TheEpoch()
    {
        var frame = DataFrame((1, 1, new Coordinate(0, 0, 0), 0, SegmentFlags.None, [9, 9]));
        BinaryPrimitives.WriteUInt32BigEndian(frame.AsSpan(ShuffleWire.FrameHeaderSize), 0x03_00_01_02);
        frame[ShuffleWire.FrameHeaderSize + 11] = 7;
        int position = ShuffleWire.FrameHeaderSize;
        Assert.Equal(WireError.None, ShuffleWire.TryReadSegment(frame, ref position, Cube, out var segment));
        Assert.Equal((3, 0x0102, 7), (segment.Source, segment.ReduceTask, segment.Epoch));
        var written = new byte[ShuffleWire.SegmentHeaderSize];
        ShuffleWire.WriteSegmentHeader(written, 0x0102, 1, SegmentFlags.Restart, 0, new Coordinate(1, 2, 3), 5, source: 3, epoch: 7);
        Assert.Equal("03000102" + "01" + "08" + "0000" + "010203" + "07" + "0000000000000005", Convert.ToHexString(written));
    }

    [Fact]
    public void ResumeRequestsRoundTripAndMalformedOnesAreRejected()
    {
        var key = "corpus"u8.ToArray();
        var request = new ResumeRequest(new StreamId(513, 4, new Coordinate(3, 2, 1), 2), new Coordinate(0, 1, 2), 9, true, key, 3);
        var entry = new byte[ShuffleWire.ResumeEntrySize(key.Length)];
        Assert.Equal(entry.Length, ShuffleWire.WriteResume(entry, request));
        // u8 source | u24 reduce task | tree | flags (HasKey) | key length | child | known epoch | requester | 0 | skip | key
        Assert.Equal("02000201" + "04" + "01" + "0006" + "030201" + "09" + "000102" + "00" + "00000003" + Convert.ToHexString(key), Convert.ToHexString(entry));
        int position = 0;
        Assert.Equal(WireError.None, ShuffleWire.TryReadResume(entry, ref position, Cube, out var read));
        Assert.Equal(entry.Length, position);
        Assert.Equal((request.Stream, request.Requester, request.KnownEpoch, true, 3u), (read.Stream, read.Requester, read.KnownEpoch, read.HasKey, read.Skip));
        Assert.Equal(key, read.Key.ToArray());

        WireError Read(byte[] bytes)
        {
            int p = 0;
            return ShuffleWire.TryReadResume(bytes, ref p, Cube, out _);
        }
        Assert.Equal(WireError.Truncated, Read(entry[..10]));
        Assert.Equal(WireError.BadSegment, Read(entry[..^1])); // the key runs past the entry
        var flags = (byte[])entry.Clone();
        flags[5] = 0x10;
        Assert.Equal(WireError.BadFlags, Read(flags));
        var keyWithoutFlag = (byte[])entry.Clone();
        keyWithoutFlag[5] = 0;
        Assert.Equal(WireError.BadFlags, Read(keyWithoutFlag));
        var requester = (byte[])entry.Clone();
        requester[13] = 9;
        Assert.Equal(WireError.BadCoordinate, Read(requester));
        var tree = (byte[])entry.Clone();
        tree[4] = 6;
        Assert.Equal(WireError.BadSegment, Read(tree));
    }

    [Fact]
    public void TheLongestResumableKeyFillsOneControlFrameExactly()
    {
        var key = new byte[ShuffleWire.MaxResumeKeyBytes];
        new Random(4).NextBytes(key);
        var request = new ResumeRequest(new StreamId(1, 0, new Coordinate(1, 1, 1), 0), new Coordinate(0, 0, 0), 1, true, key, 0);
        // The frame the transport sends: its header, then the one entry.
        var frame = new byte[ShuffleWire.MaxPayload];
        Assert.Equal(frame.Length - ShuffleWire.FrameHeaderSize, ShuffleWire.WriteResume(frame.AsSpan(ShuffleWire.FrameHeaderSize), request));
        int position = ShuffleWire.FrameHeaderSize;
        Assert.Equal(WireError.None, ShuffleWire.TryReadResume(frame, ref position, Cube, out var read));
        Assert.Equal(key, read.Key.ToArray());
        // One byte more does not fit a frame: the job fails rather than asking forever.
        int tooLong = key.Length + 1;
        Assert.Throws<ArgumentException>(() =>
        {
            var longer = new ResumeRequest(new StreamId(1, 0, new Coordinate(1, 1, 1), 0), new Coordinate(0, 0, 0), 1, true, new byte[tooLong], 0);
            ShuffleWire.WriteResume(new byte[ShuffleWire.MaxPayload].AsSpan(ShuffleWire.FrameHeaderSize), longer);
        });
    }

    [Fact]
    public void RandomBytesNeverThrow()
    {
        var random = new Random(5);
        var frame = new byte[300];
        int rejected = 0;
        for (int i = 0; i < 20_000; i++)
        {
            random.NextBytes(frame);
            // A plausible header, so that the random part is the entries.
            frame[0] = (byte)random.Next(1, 4);
            frame[1] = ShuffleWire.Version;
            frame[2] = 0;
            frame[3] = (byte)random.Next(1, 4);
            frame.AsSpan(4, 4).Clear();
            int length = random.Next(frame.Length);
            var payload = frame.AsSpan(0, length);
            if (ShuffleWire.TryReadHeader(payload, out var kind, out int count, out _) != WireError.None)
            {
                continue;
            }
            int position = ShuffleWire.FrameHeaderSize;
            for (int k = 0; k < count; k++)
            {
                var error = kind switch
                {
                    ShuffleFrameKind.Data => ShuffleWire.TryReadSegment(payload, ref position, Cube, out _),
                    ShuffleFrameKind.Ack => ShuffleWire.TryReadAck(payload, ref position, Cube, out _),
                    _ => ShuffleWire.TryReadResume(payload, ref position, Cube, out _),
                };
                if (error != WireError.None)
                {
                    rejected++;
                    break;
                }
                // An accepted entry never reaches past the payload.
                Assert.InRange(position, ShuffleWire.FrameHeaderSize, payload.Length);
            }
        }
        Assert.True(rejected > 100, $"only {rejected} random frames got past the header and were rejected");
    }
}

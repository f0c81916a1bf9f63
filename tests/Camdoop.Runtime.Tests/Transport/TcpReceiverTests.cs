using Camdoop.Runtime.Transport.Tcp;

namespace Camdoop.Runtime.Tests.Transport;

public class TcpReceiverTests
{
    private sealed class Collector : ITcpStreamSink
    {
        public List<byte> Bytes { get; } = [];

        public bool Ended { get; private set; }

        public void OnData(ReadOnlySpan<byte> data) => Bytes.AddRange(data.ToArray());

        public void OnEnd() => Ended = true;
    }

    private static byte[] Range(int from, int count) => [.. Enumerable.Range(from, count).Select(i => (byte)i)];

    [Fact]
    public void SegmentsAheadOfAHoleWaitForIt()
    {
        var sink = new Collector();
        var receiver = new TcpReceiver(sink, 1 << 20);
        Assert.Equal(0, receiver.OnSegment(10, Range(10, 10), fin: false));
        Assert.Equal(0, receiver.OnSegment(20, Range(20, 5), fin: true));
        Assert.Empty(sink.Bytes);
        Assert.Equal(26, receiver.OnSegment(0, Range(0, 10), fin: false)); // 25 bytes and the end
        Assert.Equal(Range(0, 25), sink.Bytes);
        Assert.True(sink.Ended);
    }

    [Fact]
    public void RepeatedAndOverlappingBytesAreDeliveredOnce()
    {
        var sink = new Collector();
        var receiver = new TcpReceiver(sink, 1 << 20);
        receiver.OnSegment(0, Range(0, 10), fin: false);
        Assert.Equal(10, receiver.OnSegment(0, Range(0, 10), fin: false));
        Assert.Equal(15, receiver.OnSegment(5, Range(5, 10), fin: false)); // resent from an older boundary
        Assert.Equal(Range(0, 15), sink.Bytes);
        Assert.Equal(1, receiver.Duplicates);
    }

    [Fact]
    public void AFullReorderBufferDropsWhatDoesNotFit()
    {
        var sink = new Collector();
        var receiver = new TcpReceiver(sink, 15);
        receiver.OnSegment(10, Range(10, 10), fin: false);
        receiver.OnSegment(20, Range(20, 10), fin: false); // 20 bytes would be held: dropped
        Assert.Equal(1, receiver.Overflows);
        Assert.Equal(20, receiver.OnSegment(0, Range(0, 10), fin: false));
        Assert.Equal(Range(0, 20), sink.Bytes);
    }
}

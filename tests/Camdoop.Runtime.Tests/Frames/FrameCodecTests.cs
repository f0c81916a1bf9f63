using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Frames;

public class FrameCodecTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static byte[] Pattern(int length, int seed = 1)
    {
        var bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)((i * 31) + seed);
        }
        return bytes;
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(34)]
    [InlineData(35)]
    [InlineData(1000)]
    [InlineData(FrameLayout.MaxPayload)]
    public void PlainFrameRoundTrips(int payloadLength)
    {
        var buffer = new byte[FrameLayout.BufferSize];
        Array.Fill(buffer, (byte)0xEE); // dirty buffer: padding and MACs must still come out zero
        var payload = Pattern(payloadLength);
        var header = new FrameHeader(7, new Coordinate(0, 1, 2), new Coordinate(2, 2, 0), FrameFlags.Service1, ttl: 9);

        int length = FrameCodec.Write(buffer, ref header, default, payload);

        Assert.Equal(Math.Max(FrameLayout.MinFrameSize, FrameLayout.HeaderSize + payloadLength), length);
        Assert.Equal(payloadLength, header.PayloadLength);
        Assert.All(buffer[..12], b => Assert.Equal(0, b));
        Assert.Equal(FrameLayout.EtherType, BinaryPrimitives.ReadUInt16BigEndian(buffer.AsSpan(12)));
        Assert.All(buffer[(FrameLayout.HeaderSize + payloadLength)..length], b => Assert.Equal(0, b));

        Assert.Equal(FrameError.None, FrameCodec.TryRead(buffer.AsSpan(0, length), Cube, out var read));
        Assert.Equal(7, read.ServiceId);
        Assert.Equal(FrameFlags.Service1, read.Flags);
        Assert.Equal(9, read.Ttl);
        Assert.Equal(new Coordinate(0, 1, 2), read.Source);
        Assert.Equal(new Coordinate(2, 2, 0), read.Destination);
        Assert.Equal(payloadLength, read.PayloadLength);
        Assert.False(read.IsKeyRouted);
        Assert.True(FrameCodec.Payload(buffer.AsSpan(0, length), read).SequenceEqual(payload));
        Assert.True(FrameCodec.Key(buffer.AsSpan(0, length), read).IsEmpty);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(14)]
    [InlineData(FrameLayout.MaxKeyedPayload)]
    public void KeyRoutedFrameRoundTripsWithItsKey(int payloadLength)
    {
        var buffer = new byte[FrameLayout.BufferSize];
        var key = Pattern(FrameLayout.KeySize, seed: 99);
        var payload = Pattern(payloadLength, seed: 5);
        var header = new FrameHeader(42, new Coordinate(1, 1, 1), new Coordinate(0, 0, 0), FrameFlags.KeyRouted);

        int length = FrameCodec.Write(buffer, ref header, key, payload);

        Assert.Equal(Math.Max(FrameLayout.MinFrameSize, FrameLayout.HeaderSize + FrameLayout.KeySize + payloadLength), length);
        Assert.Equal(FrameError.None, FrameCodec.TryRead(buffer.AsSpan(0, length), Cube, out var read));
        Assert.True(read.IsKeyRouted);
        Assert.Equal(FrameLayout.HeaderSize + FrameLayout.KeySize, read.PayloadOffset);
        Assert.True(FrameCodec.Key(buffer.AsSpan(0, length), read).SequenceEqual(key));
        Assert.True(FrameCodec.Payload(buffer.AsSpan(0, length), read).SequenceEqual(payload));
    }

    [Fact]
    public void MaximumPayloadFillsAJumboFrameExactly()
    {
        var buffer = new byte[FrameLayout.BufferSize];
        var header = new FrameHeader(1, default, default);
        Assert.Equal(FrameLayout.MaxFrameSize, FrameCodec.Write(buffer, ref header, default, new byte[FrameLayout.MaxPayload]));
        var keyed = new FrameHeader(1, default, default, FrameFlags.KeyRouted);
        Assert.Equal(FrameLayout.MaxFrameSize, FrameCodec.Write(buffer, ref keyed, new byte[20], new byte[FrameLayout.MaxKeyedPayload]));
        Assert.Equal(FrameLayout.MaxPayload, FrameLayout.MaxPayloadFor(FrameLayout.MaxFrameSize, keyRouted: false));
        Assert.Equal(1500 - 46, FrameLayout.MaxPayloadFor(1500, keyRouted: true));
    }

    [Fact]
    public void WritingTooMuchOrAWrongKeyThrowsForTheSender()
    {
        var buffer = new byte[FrameLayout.BufferSize];
        var header = new FrameHeader(1, default, default);
        Assert.Throws<ArgumentOutOfRangeException>(() => FrameCodec.Write(buffer, ref header, default, new byte[FrameLayout.MaxPayload + 1]));
        var keyed = new FrameHeader(1, default, default, FrameFlags.KeyRouted);
        Assert.Throws<ArgumentOutOfRangeException>(() => FrameCodec.Write(buffer, ref keyed, new byte[20], new byte[FrameLayout.MaxKeyedPayload + 1]));
        Assert.Throws<ArgumentException>(() => FrameCodec.Write(buffer, ref keyed, new byte[19], default));
    }

    [Fact]
    public void HeaderThenFinishEqualsWrite()
    {
        var payload = Pattern(12);
        var header = new FrameHeader(3, new Coordinate(1, 2, 0), new Coordinate(2, 0, 1));
        var a = new byte[FrameLayout.BufferSize];
        int lengthA = FrameCodec.Write(a, ref header, default, payload);

        var b = new byte[FrameLayout.BufferSize];
        Array.Fill(b, (byte)0x55);
        var header2 = new FrameHeader(3, new Coordinate(1, 2, 0), new Coordinate(2, 0, 1));
        int offset = FrameCodec.WriteHeader(b, ref header2, default, payload.Length);
        payload.CopyTo(b.AsSpan(offset));
        int lengthB = FrameCodec.Finish(b, offset + payload.Length);

        Assert.Equal(lengthA, lengthB);
        Assert.True(a.AsSpan(0, lengthA).SequenceEqual(b.AsSpan(0, lengthB)));
    }

    [Fact]
    public void PaddedFramesLongerThanTheirContentAreAccepted()
    {
        var buffer = new byte[FrameLayout.BufferSize];
        var header = new FrameHeader(1, default, default);
        FrameCodec.Write(buffer, ref header, default, Pattern(100));
        // A NIC may deliver a few bytes beyond the content (e.g. padding); the header's length rules.
        Assert.Equal(FrameError.None, FrameCodec.TryRead(buffer.AsSpan(0, 200), Cube, out var read));
        Assert.Equal(100, read.PayloadLength);
    }

    [Fact]
    public void TtlDecrementsUntilItWouldReachZero()
    {
        var buffer = new byte[FrameLayout.BufferSize];
        var header = new FrameHeader(1, default, default, ttl: 3);
        int length = FrameCodec.Write(buffer, ref header, default, default);
        var span = buffer.AsSpan(0, length);
        Assert.True(FrameCodec.TryDecrementTtl(span));
        Assert.True(FrameCodec.TryDecrementTtl(span));
        Assert.False(FrameCodec.TryDecrementTtl(span));
        FrameCodec.TryRead(span, Cube, out var read);
        Assert.Equal(1, read.Ttl);
    }
}

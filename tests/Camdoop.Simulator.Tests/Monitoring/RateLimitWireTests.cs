using Camdoop.Monitoring.Control;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>Rate limits on the wire and as people write them.</summary>
public sealed class RateLimitWireTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    [Fact]
    public void ALimitReadsBackAsItWasWritten()
    {
        var service = RateLimit.ForService(4, 25_000_000, portMask: 0b100001, servers: [new Coordinate(0, 1, 2), new Coordinate(2, 2, 2)]);
        var payload = RateLimitWire.Write(new Coordinate(1, 1, 1), service);
        Assert.True(RateLimitWire.TryRead(payload, Cube, out var root, out var read));
        Assert.Equal(new Coordinate(1, 1, 1), root);
        Assert.Equal(service.Target, read!.Target);
        Assert.Equal(service.ServiceId, read.ServiceId);
        Assert.Equal(service.BytesPerSecond, read.BytesPerSecond);
        Assert.Equal(service.PortMask, read.PortMask);
        Assert.Equal(service.Servers, read.Servers);
        Assert.Equal([Port.XPlus, Port.ZMinus], read.PortsCovered);

        var job = RateLimit.ForJob(0xCA3D_0000_0000_0002UL, 0);
        Assert.True(RateLimitWire.TryRead(RateLimitWire.Write(new Coordinate(2, 0, 1), job), Cube, out _, out read));
        Assert.Equal(RateLimitTarget.Job, read!.Target);
        Assert.Equal(job.JobId, read.JobId);
        Assert.Equal(0, read.BytesPerSecond);
        Assert.Empty(read.Servers);
        Assert.True(read.Covers(new Coordinate(0, 0, 0)));
    }

    [Fact]
    public void DamagedMessagesAreRefused()
    {
        var good = RateLimitWire.Write(new Coordinate(1, 1, 1), RateLimit.ForService(3, 1_000, servers: [new Coordinate(1, 0, 0)]));
        Assert.False(RateLimitWire.TryRead(good.AsSpan(0, good.Length - 1), Cube, out _, out _));
        Assert.False(RateLimitWire.TryRead(good.AsSpan(0, 5), Cube, out _, out _));
        var outside = (byte[])good.Clone();
        outside[RateLimitWire.HeaderSize] = 3; // server 3,0,0 is not in the 3x3x3 cube
        Assert.False(RateLimitWire.TryRead(outside, Cube, out _, out _));
        var target = (byte[])good.Clone();
        target[4] = 9;
        Assert.False(RateLimitWire.TryRead(target, Cube, out _, out _));
        var ports = (byte[])good.Clone();
        ports[22] = 0;
        Assert.False(RateLimitWire.TryRead(ports, Cube, out _, out _));
        var negative = (byte[])good.Clone();
        negative[14] = 0x80;
        Assert.False(RateLimitWire.TryRead(negative, Cube, out _, out _));
        Assert.True(RateLimitWire.MaxServers * 3 <= FrameLayout.MaxPayload);
    }

    [Theory]
    [InlineData("50mbit", 6_250_000)]
    [InlineData("1gbit", 125_000_000)]
    [InlineData("1.5Gbit", 187_500_000)]
    [InlineData("800kbit", 100_000)]
    [InlineData("8bit", 1)]
    [InlineData(" 100 mbit/s ", 12_500_000)]
    public void RatesAreBitsPerSecondReadAsBytes(string text, long bytes)
    {
        Assert.True(RateText.TryParse(text, out long read));
        Assert.Equal(bytes, read);
    }

    [Theory]
    [InlineData("")]
    [InlineData("50")]
    [InlineData("50mb")]
    [InlineData("50mbps")]
    [InlineData("-1mbit")]
    [InlineData("0gbit")]
    [InlineData("1bit")]
    [InlineData("9tbit")]
    [InlineData("nanmbit")]
    public void OtherRatesAreRefused(string text) => Assert.False(RateText.TryParse(text, out _));

    [Fact]
    public void RatesAreShownInBits()
    {
        Assert.Equal("50 Mbit/s", RateText.Format(6_250_000));
        Assert.Equal("1.5 Gbit/s", RateText.Format(187_500_000));
        Assert.Equal("800 kbit/s", RateText.Format(100_000));
    }
}

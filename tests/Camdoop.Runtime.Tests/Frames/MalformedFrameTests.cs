using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Frames;

/// <summary>Every class of malformed frame is rejected with its reason, counted by the host, and never throws.</summary>
public class MalformedFrameTests
{
    private const byte Service = 9;

    /// <summary>Valid frame bytes from the neighbour on -X to the fixture's server, then broken by <paramref name="kind"/>.</summary>
    private static byte[] Malformed(string kind)
    {
        var buffer = new byte[FrameLayout.BufferSize];
        var from = new Coordinate(0, 1, 1);
        var to = new Coordinate(1, 1, 1);
        bool keyed = kind == "keyed-truncated";
        var header = new FrameHeader(Service, from, to, keyed ? FrameFlags.KeyRouted : FrameFlags.None);
        int length = FrameCodec.Write(buffer, ref header, keyed ? new byte[20] : default, new byte[100]);
        switch (kind)
        {
            case "tiny":
                return buffer[..10];
            case "short-header":
                return buffer[..20];
            case "keyed-truncated":
                return buffer[..40];
            case "short-foreign":
                BinaryPrimitives.WriteUInt16BigEndian(buffer.AsSpan(12), 0x0800);
                return buffer[..20];
            case "ethertype":
                BinaryPrimitives.WriteUInt16BigEndian(buffer.AsSpan(12), 0x0800);
                break;
            case "version":
                buffer[14] = 2;
                break;
            case "length":
                BinaryPrimitives.WriteUInt16BigEndian(buffer.AsSpan(24), 101 + 60);
                break;
            case "length-max":
                BinaryPrimitives.WriteUInt16BigEndian(buffer.AsSpan(24), ushort.MaxValue);
                break;
            case "oversize":
                return buffer[..(FrameLayout.MaxFrameSize + 1)];
            case "flags":
                buffer[16] = 0x08;
                break;
            case "flags-high":
                buffer[16] = 0x08 | 0x04 | 0x01;
                break;
            case "source":
                buffer[18] = 3;
                break;
            case "destination":
                buffer[23] = 200;
                break;
            case "valid":
                break;
            default:
                throw new ArgumentException(kind, nameof(kind));
        }
        return buffer[..length];
    }

    public static TheoryData<string, FrameError> Cases => new()
    {
        { "tiny", FrameError.Truncated },
        { "short-header", FrameError.Truncated },
        { "keyed-truncated", FrameError.Truncated },
        { "short-foreign", FrameError.WrongEtherType },
        { "ethertype", FrameError.WrongEtherType },
        { "version", FrameError.WrongVersion },
        { "length", FrameError.BadLength },
        { "length-max", FrameError.BadLength },
        { "oversize", FrameError.Oversize },
        { "flags", FrameError.BadFlags },
        { "flags-high", FrameError.BadFlags },
        { "source", FrameError.BadCoordinate },
        { "destination", FrameError.BadCoordinate },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void CodecNamesTheReason(string kind, FrameError expected)
    {
        Assert.Equal(expected, FrameCodec.TryRead(Malformed(kind), HostFixture.Cube, out _));
        Assert.False(string.IsNullOrEmpty(expected.Describe()));
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void HostCountsAndDropsIt(string kind, FrameError expected)
    {
        var f = new HostFixture();
        var service = new RecordingService(Service);
        f.Host.Register(service);
        f.Host.Start();
        long inUse = f.Pool.InUse;

        var bytes = Malformed(kind);
        var frame = f.Pool.Rent();
        bytes.CopyTo(frame.Buffer, 0);
        frame.Length = bytes.Length;
        f.Receive(Port.XMinus, frame);

        Assert.Equal(1, f.Host.Counters.RejectedFor(expected));
        Assert.Equal(1, f.Host.Counters.TotalRejected);
        Assert.Equal(1, f.Host.Counters.FramesReceived[(int)Port.XMinus]);
        Assert.Empty(service.Frames);
        Assert.Equal(inUse, f.Pool.InUse); // released
    }

    [Fact]
    public void HostRejectsFramesForAServiceItDoesNotRun()
    {
        var f = new HostFixture();
        f.Host.Start();
        long beacons = f.Pool.InUse;
        f.Receive(Port.XMinus, f.Build(77, f.NeighbourOn(Port.XMinus), f.Self, new byte[8]));
        Assert.Equal(1, f.Host.Counters.RejectedFor(FrameError.UnknownService));
        Assert.Equal(beacons, f.Pool.InUse);
    }

    [Fact]
    public void ControlFrameIsAcceptedSoTheCasesAboveAreMeaningful()
    {
        var f = new HostFixture();
        var service = new RecordingService(Service);
        f.Host.Register(service);
        f.Host.Start();
        var bytes = new byte[FrameLayout.BufferSize];
        var header = new FrameHeader(Service, new Coordinate(0, 1, 1), new Coordinate(1, 1, 1));
        int length = FrameCodec.Write(bytes, ref header, default, new byte[100]);
        var frame = f.Pool.Rent();
        bytes.AsSpan(0, length).CopyTo(frame.Buffer);
        frame.Length = length;
        f.Receive(Port.XMinus, frame);
        Assert.Equal(0, f.Host.Counters.TotalRejected);
        Assert.Single(service.Frames);
    }

    [Fact]
    public void RandomGarbageAndMutatedFramesNeverThrowAndAreAllAccountedFor()
    {
        var f = new HostFixture();
        var service = new RecordingService(Service);
        f.Host.Register(service);
        f.Host.Start();
        foreach (var link in f.Links)
        {
            link.ReleaseAll(); // the monitor's first beacons
        }
        var random = new Random(1234);
        var valid = Malformed("valid");
        var expectedRejected = new long[FrameErrors.Count];
        long expectedAccepted = 0;
        const int Count = 20_000;
        for (int i = 0; i < Count; i++)
        {
            var frame = f.Pool.Rent();
            if (i % 2 == 0)
            {
                frame.Length = random.Next(0, FrameLayout.BufferSize + 1);
                random.NextBytes(frame.Buffer.AsSpan(0, frame.Length));
                if (i % 4 == 0 && frame.Length >= 16)
                {
                    BinaryPrimitives.WriteUInt16BigEndian(frame.Buffer.AsSpan(12), FrameLayout.EtherType);
                    frame.Buffer[14] = FrameLayout.Version;
                    frame.Buffer[15] = Service;
                }
            }
            else
            {
                valid.CopyTo(frame.Buffer, 0);
                frame.Length = valid.Length - (random.Next(0, 3) * random.Next(0, 60));
                int flips = random.Next(1, 4);
                for (int k = 0; k < flips; k++)
                {
                    int at = random.Next(12, 26);
                    frame.Buffer[at] = at == 15 ? (byte)random.Next(8, 11) : (byte)random.Next(256);
                }
            }
            var error = FrameCodec.TryRead(frame.Span, HostFixture.Cube, out var header);
            if (error == FrameError.None && header.ServiceId != Service && header.ServiceId != WellKnownServices.LinkMonitor)
            {
                error = FrameError.UnknownService;
            }
            if (error != FrameError.None)
            {
                expectedRejected[(int)error]++;
            }
            else if (header.ServiceId == Service)
            {
                expectedAccepted++;
            }
            f.Receive((Port)random.Next(Ports.Count), frame);
        }
        Assert.Equal(expectedRejected, f.Host.Counters.Rejected);
        Assert.Equal(expectedAccepted, service.Frames.Count);
        Assert.True(f.Host.Counters.TotalRejected > Count / 2);
        Assert.True(expectedAccepted > 100, $"only {expectedAccepted} mutated frames stayed valid");
        long received = 0;
        foreach (var port in Ports.All)
        {
            received += f.Host.Counters.FramesReceived[(int)port];
        }
        Assert.Equal(Count, received);
        Assert.Equal(0, f.Pool.InUse);
    }
}

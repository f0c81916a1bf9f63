using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;

namespace Camdoop.Runtime.Tests.Node;

public class NodeHostLocalDeliveryTests
{
    [Fact]
    public void LocalDeliveryHappensLaterFromItsOwnEventNeverInsideTheSender()
    {
        var f = new HostFixture();
        var service = new RecordingService(10);
        int sent = 0;
        service.OnFrameHook = (in InboundFrame frame) =>
        {
            if (sent < 3)
            {
                sent++;
                var header = new FrameHeader(10, f.Self, f.Self);
                f.Host.DeliverLocal(ref header, default, [(byte)sent]);
                // RecordingService asserts that OnFrame is never entered twice at once.
                Assert.Equal(sent, service.Frames.Count);
            }
        };
        service.OnStartHook = ctx =>
        {
            var header = new FrameHeader(10, f.Self, f.Self);
            f.Host.DeliverLocal(ref header, default, [0]);
        };
        f.Host.Register(service);
        f.Host.Start();
        Assert.Empty(service.Frames);

        for (int round = 1; round <= 4; round++)
        {
            Assert.True(f.Driver.FireNext(f.Driver.Now)); // one zero-delay event per delivery
            Assert.Equal(round, service.Frames.Count);
        }
        Assert.Equal([0, 1, 2, 3], service.Frames.Select(fr => (int)fr.Payload[0]));
        Assert.All(service.Frames, fr => Assert.True(fr.IsLocal));
        Assert.Equal(4, f.Host.Counters.LocalDeliveries);
        Assert.Equal(0, f.Host.Counters.FramesReceived.Sum());
    }

    [Fact]
    public void LocalDeliveryToAnUnknownServiceIsCountedNotThrown()
    {
        var f = new HostFixture();
        f.Host.Register(new RecordingService(10));
        f.Host.Start();
        long inUse = f.Pool.InUse;
        var header = new FrameHeader(123, f.Self, f.Self);
        f.Host.DeliverLocal(ref header, default, [1, 2, 3]);
        f.Driver.RunDue();
        Assert.Equal(1, f.Host.Counters.RejectedFor(FrameError.UnknownService));
        Assert.Equal(inUse, f.Pool.InUse);
    }

    [Fact]
    public void StoppingReleasesFramesWaitingForLocalDelivery()
    {
        var f = new HostFixture();
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        foreach (var link in f.Links)
        {
            link.ReleaseAll();
        }
        var header = new FrameHeader(10, f.Self, f.Self);
        f.Host.DeliverLocal(ref header, default, [1]);
        f.Host.DeliverLocal(ref header, default, [2]);
        Assert.Equal(2, f.Pool.InUse);

        f.Host.Stop();
        Assert.Equal(0, f.Pool.InUse);
        Assert.True(service.Stopped);
        f.Host.DeliverLocal(ref header, default, [3]);
        f.Driver.RunDue();
        Assert.Empty(service.Frames);
        Assert.Equal(0, f.Pool.InUse);
    }
}

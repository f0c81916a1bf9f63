using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node;

/// <summary>The counters monitoring reads: per service queue, and per port (backlog time, drops).</summary>
public class NodeHostCountersTests
{
    private static SendStatus Send(NodeHost host, byte service, Port port, int payloadLength)
    {
        var header = new FrameHeader(service, host.Self, host.Torus.Neighbour(host.Self, port));
        return host.TrySend(port, ref header, default, new byte[payloadLength]);
    }

    [Fact]
    public void AQueueCountsWhatItAdmitsAndSendsAndThePortHowLongFramesWaited()
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 8 });
        f.Host.Register(new RecordingService(10));
        f.Host.Start();
        var link = f.Link(Port.XPlus);
        link.ReleaseAll();
        Assert.Equal(-1, f.Host.Counters.BacklogSince[(int)Port.XPlus]);
        link.Budget = 0;
        f.Driver.AdvanceTo(1_000);
        Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.XPlus, 100));
        Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.XPlus, 2_000));
        var waiting = f.Host.QueueCounters(10, Port.XPlus);
        int small = FrameLayout.HeaderSize + 100;
        int large = FrameLayout.HeaderSize + 2_000;
        Assert.Equal(new ServiceQueueCounters(2, small + large, 0, 0, 2), waiting);
        Assert.Equal(1_000, f.Host.Counters.BacklogSince[(int)Port.XPlus]);
        Assert.Equal(400, f.Host.Counters.BacklogAt(Port.XPlus, 1_400));

        f.Driver.AdvanceTo(5_000);
        link.Budget = 100;
        f.Host.OnTransmitReady(Port.XPlus);
        // Frames of other services (beacons) may have queued meanwhile; this service's two went out.
        Assert.Equal(new ServiceQueueCounters(2, small + large, 2, small + large, 0), f.Host.QueueCounters(10, Port.XPlus));
        Assert.Equal(-1, f.Host.Counters.BacklogSince[(int)Port.XPlus]);
        Assert.Equal(4_000, f.Host.Counters.BacklogNs[(int)Port.XPlus]);
        Assert.Equal(0, f.Host.Counters.BacklogNs[(int)Port.YPlus]);
        // Per port and per queue agree.
        long perQueue = f.Host.Services.Sum(s => f.Host.QueueCounters(s.Id, Port.XPlus).BytesSent);
        Assert.Equal(f.Host.Counters.BytesSent[(int)Port.XPlus], perQueue);
        link.ReleaseAll();
    }

    [Fact]
    public void FramesFlushedWhenALinkGoesDownAreThatPortsDrops()
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 8 });
        f.Host.Register(new RecordingService(10));
        f.Host.Start();
        var link = f.Link(Port.ZMinus);
        link.ReleaseAll();
        link.Budget = 0;
        for (int i = 0; i < 3; i++)
        {
            Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.ZMinus, 10));
        }
        long flushedBefore = f.Host.Counters.QueueFlushed;
        f.Host.OnCarrierChanged(Port.ZMinus, false);
        long flushed = f.Host.Counters.QueueFlushed - flushedBefore;
        Assert.True(flushed >= 3, $"{flushed} flushed");
        Assert.Equal(flushed, f.Host.Counters.PortDrops[(int)Port.ZMinus]);
        Assert.Equal(0, f.Host.Counters.PortDrops[(int)Port.ZPlus]);
        Assert.Equal(0, f.Host.QueueCounters(10, Port.ZMinus).Waiting);
        Assert.Equal(-1, f.Host.Counters.BacklogSince[(int)Port.ZMinus]);
    }
}

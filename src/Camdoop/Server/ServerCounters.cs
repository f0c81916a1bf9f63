using Camdoop.ChunkStore;
using Camdoop.JobControl;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Server;

/// <summary>
/// The counters a server's node host and services keep, by owner, under the names status.json gives them ("node",
/// "routing", "ping", "chunkStore", "camdoop", "monitor", "jobControl"), and each port's traffic. Read on the event
/// loop, where the counters are written; a real node adds what only its process has (its event loop's faults, its
/// links' kernel drops, the front-end's and the web view's counters).
/// </summary>
public static class ServerCounters
{
    /// <summary>Every group of the services registered on <paramref name="host"/>; a service it does not run has none.</summary>
    public static Dictionary<string, IReadOnlyDictionary<string, long>> Read(NodeHost host)
    {
        ArgumentNullException.ThrowIfNull(host);
        var counters = new Dictionary<string, IReadOnlyDictionary<string, long>>(StringComparer.Ordinal)
        {
            ["node"] = Node(host),
        };
        if (host.GetService<KeyRoutingService>() is { } routing)
        {
            counters["routing"] = Routing(routing.Counters);
        }
        if (host.GetService<PingService>() is { } ping)
        {
            counters["ping"] = new Dictionary<string, long>(StringComparer.Ordinal)
            {
                ["requestsAnswered"] = ping.RequestsAnswered,
                ["repliesDropped"] = ping.RepliesDropped,
                ["unexpected"] = ping.Unexpected,
            };
        }
        if (host.GetService<ChunkStoreService>() is { } store)
        {
            var values = store.Counters.ToDictionary();
            values["replicasHeld"] = store.Local.Count;
            values["bytesHeld"] = store.Local.BytesStored;
            values["activeOutbound"] = store.ActiveOutbound;
            values["activeInbound"] = store.ActiveInbound;
            counters["chunkStore"] = values;
        }
        if (host.GetService<CamdoopService>() is { } camdoop)
        {
            counters["camdoop"] = Shuffle(camdoop);
        }
        if (host.GetService<MonitorService>() is { } monitor)
        {
            var m = monitor.Counters;
            counters["monitor"] = new Dictionary<string, long>(StringComparer.Ordinal)
            {
                ["rounds"] = m.Rounds,
                ["resultFramesSent"] = m.ResultFramesSent,
                ["resultBytesSent"] = m.ResultBytesSent,
                ["resultBytesReceived"] = m.ResultBytesReceived,
                ["lateResults"] = m.LateResults,
                ["incomplete"] = m.Incomplete,
                ["malformed"] = m.Malformed,
                ["dropped"] = m.Dropped,
                ["queriesAsked"] = monitor.Running,
            };
        }
        if (host.GetService<JobControlService>() is { } jobs)
        {
            counters["jobControl"] = new Dictionary<string, long>(StringComparer.Ordinal)
            {
                ["coordinated"] = jobs.CoordinatedJobs.Count,
                ["copiesKept"] = jobs.RecordCopies,
                ["takeovers"] = jobs.Takeovers,
                ["coordinatorChanges"] = jobs.CoordinatorChanges,
                ["malformed"] = jobs.MalformedFrames,
                ["gaveUp"] = jobs.GaveUpMessages,
                ["retries"] = jobs.RetriedMessages,
            };
        }
        return counters;
    }

    /// <summary>One port's traffic as the node host counts it, with whether its link is up, has carrier and was ever heard.</summary>
    public static Dictionary<string, long> Port(NodeHost host, Port port)
    {
        ArgumentNullException.ThrowIfNull(host);
        var c = host.Counters;
        int p = (int)port;
        return new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["carrier"] = host.HasCarrier(port) ? 1 : 0,
            ["up"] = host.IsLinkUp(port) ? 1 : 0,
            ["heard"] = host.Monitor.HasHeard(port) ? 1 : 0,
            ["framesSent"] = c.FramesSent[p],
            ["framesReceived"] = c.FramesReceived[p],
            ["bytesSent"] = c.BytesSent[p],
            ["bytesReceived"] = c.BytesReceived[p],
            ["drops"] = c.PortDrops[p],
            ["busyNs"] = c.BacklogAt(port, host.Now),
        };
    }

    /// <summary>The runtime's own counters: frames forwarded, rejected (in all and by reason) and dropped.</summary>
    private static Dictionary<string, long> Node(NodeHost host)
    {
        var c = host.Counters;
        var values = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["framesRejected"] = c.TotalRejected,
            ["framesForwarded"] = c.FramesForwarded,
            ["forwardDropped"] = c.ForwardDropped,
            ["queueFull"] = c.QueueFull,
            ["queueFlushed"] = c.QueueFlushed,
            ["sentOnDownLink"] = c.SentOnDownLink,
            ["serviceFaults"] = c.ServiceFaults,
            ["wiringErrors"] = host.Monitor.WiringErrors,
            ["malformedBeacons"] = host.Monitor.MalformedBeacons,
        };
        for (int i = 1; i < FrameErrors.Count; i++)
        {
            var error = (FrameError)i;
            values["rejected" + error] = c.RejectedFor(error);
        }
        return values;
    }

    private static Dictionary<string, long> Shuffle(CamdoopService camdoop)
    {
        var c = camdoop.Counters;
        var values = new Dictionary<string, long>(StringComparer.Ordinal)
        {
            ["jobs"] = camdoop.Jobs.Count,
            // Shuffle buffers handed out now: 0 once no job is left here, so a dropped job leaked none.
            ["bufferBytesRented"] = camdoop.Transport.Buffers.RentedBytes,
            ["dataFramesSent"] = c.DataFramesSent,
            ["dataBytesSent"] = c.DataBytesSent,
            ["dataBytesReceived"] = c.DataBytesReceived,
            ["retransmittedBytes"] = c.RetransmittedBytes,
            ["timeouts"] = c.Timeouts,
            ["fastRetransmits"] = c.FastRetransmits,
            ["unknownJob"] = c.UnknownJob,
            ["malformed"] = c.MalformedTotal,
        };
        // Shuffle frames dropped as malformed, one counter per reason ("malformedBadCount", ...).
        for (int i = 1; i < c.Malformed.Length; i++)
        {
            values["malformed" + (WireError)i] = c.Malformed[i];
        }
        return values;
    }

    private static Dictionary<string, long> Routing(KeyRoutingCounters r) => new(StringComparer.Ordinal)
    {
        ["originated"] = r.Originated,
        ["forwarded"] = r.Forwarded,
        ["delivered"] = r.Delivered,
        ["droppedNoRoute"] = r.DroppedNoRoute,
        ["droppedTtl"] = r.DroppedTtl,
        ["droppedForward"] = r.DroppedForward,
        ["malformedControl"] = r.MalformedControl,
        ["recomputations"] = r.Recomputations,
    };
}

namespace Camdoop.MapReduce.Shuffle;

/// <summary>What one server's Camdoop transport did. Plain fields: updated on the event loop only.</summary>
public sealed class ShuffleCounters
{
    private const int WireErrorCount = (int)WireError.TrailingBytes + 1;

    public long DataFramesSent;
    public long SegmentsSent;

    /// <summary>Record-stream bytes put into segments, retransmissions included.</summary>
    public long DataBytesSent;

    public long RetransmittedBytes;
    public long AckFramesSent;
    public long AckEntriesSent;
    public long ProbesSent;

    /// <summary>Frames built but refused by the routing layer (queue full on another port, link down, unreachable).</summary>
    public long SendFailures;

    public long DataFramesReceived;
    public long AckFramesReceived;

    /// <summary>New in-order record-stream bytes accepted from the network.</summary>
    public long DataBytesReceived;

    /// <summary>Accepted data bytes x links each crossed (from the routed frame's TTL).</summary>
    public long DataByteHops;

    public long DuplicateSegments;
    public long OutOfOrderSegments;
    public long Timeouts;
    public long FastRetransmits;

    /// <summary>Frames or entries for a job this server does not run (or no longer runs).</summary>
    public long UnknownJob;

    /// <summary>Frames of a job about to start here, held until it did (<see cref="Service.CamdoopService.Expect"/>).</summary>
    public long HeldEarly;

    /// <summary>Entries naming a stream this server does not terminate (wrong reduce task, tree or child).</summary>
    public long UnknownStream;

    /// <summary>Restart requests of an earlier generation of their reduce task (the requester had not started it over).</summary>
    public long StaleResumes;

    /// <summary>Acks that acknowledge bytes never sent.</summary>
    public long InvalidAcks;

    /// <summary>Bytes handed from map outputs to the local vertices in memory (the loopback path: no frames).</summary>
    public long LocalBytes;

    // Failure recovery (the Camdoop paper, §4.2).

    /// <summary>Bytes sent again after a restart that the stream had sent before it (retransmissions aside).</summary>
    public long ResentBytes;

    /// <summary>Segments or acks of an epoch the other side has left (sent before a restart).</summary>
    public long StaleEpoch;

    public long ResumesSent;
    public long ResumesReceived;

    /// <summary>Streams restarted from the bytes they still held.</summary>
    public long RestartsFromKept;

    /// <summary>Streams regenerated (vertices merging again from a key, runs read again from a key).</summary>
    public long Regenerations;

    /// <summary>Vertices and root reducers of failed servers taken over here.</summary>
    public long VerticesAdopted;

    /// <summary>Map tasks of failed servers run again here.</summary>
    public long MapTasksRerun;

    public long[] Malformed { get; } = new long[WireErrorCount];

    public long MalformedTotal => Malformed.Sum();
}

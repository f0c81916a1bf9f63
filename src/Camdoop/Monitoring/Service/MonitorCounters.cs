namespace Camdoop.Monitoring.Service;

/// <summary>What the monitoring service did on one server.</summary>
public sealed class MonitorCounters
{
    /// <summary>Rounds this server took part in (asked by a parent, or started as the asking server).</summary>
    public long Rounds { get; set; }

    public long ResultFramesSent { get; set; }

    public long ResultBytesSent { get; set; }

    public long ResultFramesReceived { get; set; }

    /// <summary>Payload bytes of results received from children: what the tree delivers to this server.</summary>
    public long ResultBytesReceived { get; set; }

    /// <summary>Results that arrived after this server had sent its round on (a child was too slow, or the round is unknown).</summary>
    public long LateResults { get; set; }

    /// <summary>Rounds this server sent on without every child's result (the child's deadline passed).</summary>
    public long Incomplete { get; set; }

    /// <summary>Frames that were not a well-formed monitoring message, or carried a query that does not parse.</summary>
    public long Malformed { get; set; }

    /// <summary>Results dropped because the link to the parent was down.</summary>
    public long Dropped { get; set; }

    /// <summary>Rate limits this server applied to itself (set or lifted), from its own front-end or down the tree.</summary>
    public long LimitsApplied { get; set; }
}

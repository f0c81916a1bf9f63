namespace Camdoop.KeyRouting;

/// <summary>What the routing service did on one server. Written by the node's event loop only.</summary>
public sealed class KeyRoutingCounters
{
    /// <summary>Frames started here by a <c>KeyRoutingService.Route</c> overload or <see cref="KeyRoutingService.RouteTo"/> and queued.</summary>
    public long Originated { get; internal set; }

    /// <summary>Routed frames handed on towards their destination.</summary>
    public long Forwarded { get; internal set; }

    /// <summary>Routed frames whose destination (or key owner) is this server, handed to their service.</summary>
    public long Delivered { get; internal set; }

    /// <summary>Routed frames dropped because no live path leads to their destination.</summary>
    public long DroppedNoRoute { get; internal set; }

    /// <summary>Routed frames dropped because their TTL ran out (a routing loop while views disagree).</summary>
    public long DroppedTtl { get; internal set; }

    /// <summary>Transit frames dropped because the next hop's queue was full or its link went down.</summary>
    public long DroppedForward { get; internal set; }

    /// <summary>Own link-state advertisements issued (a link of this server changed).</summary>
    public long AdvertisementsOriginated { get; internal set; }

    public long ControlFramesSent { get; internal set; }

    public long ControlFramesReceived { get; internal set; }

    /// <summary>Advertisements received that were newer than what this server knew.</summary>
    public long AdvertisementsAccepted { get; internal set; }

    /// <summary>Control frames or entries that failed validation.</summary>
    public long MalformedControl { get; internal set; }

    /// <summary>Route computations (one per burst of link-state changes).</summary>
    public long Recomputations { get; internal set; }
}

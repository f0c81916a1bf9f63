namespace Camdoop.Simulator.Events;

/// <summary>
/// Order keys of simultaneous events: the entity an event concerns (a directed link, or a node's timers) in the
/// high bits, then the sequence number of the partition that scheduled it. Every event of one entity is scheduled
/// by the one partition that owns it (a link's events by its sender's, a node's timers by the node's own), in a
/// fixed order, so the key sorts an entity's events in scheduling order and different entities by id: the same
/// order whether the cube runs as one partition or several.
/// </summary>
public static class EventOrder
{
    /// <summary>Bits of the scheduling partition's sequence number.</summary>
    public const int SequenceBits = 40;

    /// <summary>Largest entity id (a directed link is server x 6 + port; timers of server s are 6N + s).</summary>
    public const int MaxEntity = (1 << (64 - SequenceBits)) - 1;

    public const long MaxSequence = (1L << SequenceBits) - 1;

    public static ulong Of(int entity, long sequence) => ((ulong)(uint)entity << SequenceBits) | (ulong)sequence;

    public static int EntityOf(ulong order) => (int)(order >> SequenceBits);
}

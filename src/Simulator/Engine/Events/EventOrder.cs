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

    /// <summary>
    /// The key of an event at <paramref name="time"/> with the entities ranked by a permutation that changes with the
    /// time (a bijection on entity ids for each time, so simultaneous events still have distinct entities, and one
    /// entity's events still sort by sequence). Simultaneous frames then reach a switch in an order that varies, as a
    /// switch's arbiter serves its inputs in turn, instead of the lowest-numbered link always first.
    /// </summary>
    public static ulong Of(int entity, long sequence, long time)
    {
        ulong h = (ulong)time * 0x9E3779B97F4A7C15UL;
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9UL;
        h ^= h >> 32;
        ulong ranked = (((uint)entity ^ h) * ((h >> 24) | 1)) & MaxEntity;
        return (ranked << SequenceBits) | (ulong)sequence;
    }

    public static int EntityOf(ulong order) => (int)(order >> SequenceBits);
}

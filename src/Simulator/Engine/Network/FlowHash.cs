namespace Camdoop.Simulator.Network;

/// <summary>
/// The mixing step of the hashes that pin a flow to a path (ECMP at a switch, a GRIN entry server): MurmurHash3's
/// 64-bit finaliser, so neighbouring ids land on unrelated paths.
/// </summary>
internal static class FlowHash
{
    public static uint Finish(ulong h)
    {
        h ^= h >> 33;
        h *= 0xFF51AFD7ED558CCDUL;
        h ^= h >> 33;
        h *= 0xC4CEB9FE1A85EC53UL;
        h ^= h >> 33;
        return (uint)h;
    }
}

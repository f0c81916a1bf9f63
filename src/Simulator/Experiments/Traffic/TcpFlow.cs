namespace Camdoop.Experiments.Traffic;

/// <summary>One TCP transfer of <paramref name="Bytes"/> from server index <paramref name="Source"/> to <paramref name="Destination"/>.</summary>
public readonly record struct TcpFlow(int Source, int Destination, long Bytes)
{
    /// <summary>Every server but <paramref name="receiver"/> sends <paramref name="bytes"/> to it.</summary>
    public static IReadOnlyList<TcpFlow> Incast(int servers, int receiver, long bytes) =>
        [.. Enumerable.Range(0, servers).Where(s => s != receiver).Select(s => new TcpFlow(s, receiver, bytes))];

    /// <summary>
    /// Every server sends <paramref name="bytes"/> to another and receives from exactly one: a random cyclic
    /// permutation (Sattolo's shuffle), so no server sends to itself.
    /// </summary>
    public static IReadOnlyList<TcpFlow> Permutation(int servers, long bytes, int seed)
    {
        var random = new Random(seed);
        var target = Enumerable.Range(0, servers).ToArray();
        for (int i = servers - 1; i > 0; i--)
        {
            int j = random.Next(i);
            (target[i], target[j]) = (target[j], target[i]);
        }
        return [.. Enumerable.Range(0, servers).Select(s => new TcpFlow(s, target[s], bytes))];
    }
}

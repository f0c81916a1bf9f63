namespace Camdoop.Experiments.Baselines;

/// <summary>
/// What a shuffle must move: the intermediate bytes each server holds for each reduce task, and the server
/// each reduce task runs on. Servers are numbered as in <see cref="Runtime.Topology.Torus.IndexOf"/>.
/// </summary>
public sealed class ShuffleDemand
{
    private readonly long[] _bytes;

    public ShuffleDemand(int servers, int[] reducerServer)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(servers, 1);
        ArgumentNullException.ThrowIfNull(reducerServer);
        foreach (int s in reducerServer)
        {
            ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)s, (uint)servers, nameof(reducerServer));
        }
        Servers = servers;
        ReducerServer = reducerServer;
        _bytes = new long[servers * reducerServer.Length];
    }

    public int Servers { get; }

    public int Reducers => ReducerServer.Count;

    public IReadOnlyList<int> ReducerServer { get; }

    public long this[int server, int reducer]
    {
        get => _bytes[(server * Reducers) + reducer];
        set => _bytes[(server * Reducers) + reducer] = value;
    }

    public void Add(int server, int reducer, long bytes) => _bytes[(server * Reducers) + reducer] += bytes;

    public long Total
    {
        get
        {
            long sum = 0;
            foreach (long b in _bytes)
            {
                sum += b;
            }
            return sum;
        }
    }
}

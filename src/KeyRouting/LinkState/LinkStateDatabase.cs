using System.Runtime.CompilerServices;

namespace Camdoop.KeyRouting;

/// <summary>The newest advertisement known per origin server; starts with every link assumed up.</summary>
internal sealed class LinkStateDatabase
{
    private readonly ulong[] _epoch;
    private readonly uint[] _sequence;
    private readonly byte[] _links;
    private readonly List<int> _advertised = [];

    public LinkStateDatabase(int servers)
    {
        _epoch = new ulong[servers];
        _sequence = new uint[servers];
        _links = new byte[servers];
        Array.Fill(_links, LinkStateAdvertisement.AllUp);
    }

    public int Count => _links.Length;

    /// <summary>Servers that have advertised at least once (their entries are worth sending in a database exchange), in order first heard.</summary>
    public IReadOnlyList<int> Advertised => _advertised;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool IsUp(int server, int port) => ((_links[server] >> port) & 1) != 0;

    public byte Links(int server) => _links[server];

    public LinkStateAdvertisement Get(int server) => new(server, _epoch[server], _sequence[server], _links[server]);

    /// <summary>Stores <paramref name="lsa"/> unconditionally (the caller checked it is newer).</summary>
    public void Set(in LinkStateAdvertisement lsa)
    {
        int i = lsa.Origin;
        bool wasAssumed = _epoch[i] == 0 && _sequence[i] == 0;
        _epoch[i] = lsa.Epoch;
        _sequence[i] = lsa.Sequence;
        _links[i] = lsa.Links;
        if (wasAssumed && (lsa.Epoch != 0 || lsa.Sequence != 0))
        {
            _advertised.Add(i);
        }
    }

    public bool HasAdvertised(int server) => _epoch[server] != 0 || _sequence[server] != 0;
}

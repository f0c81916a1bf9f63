using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// One job's view on this server: the servers reachable when the job started here, less every server lost since. It
/// only shrinks (a server that comes back, with empty memory, does not rejoin the job). It decides where a lost
/// server's work goes: the owner of a key is a pure function of (key, view), so servers with the same view agree on
/// every new owner without exchanging a message.
/// </summary>
internal sealed class JobView(Torus torus, ServerSet servers, int self)
{
    /// <summary>The servers still in the job.</summary>
    public ServerSet Servers { get; } = servers;

    public bool Contains(int server) => Servers.Contains(server);

    public bool Contains(Coordinate server) => Servers.Contains(torus.IndexOf(server));

    /// <summary>The server that owns <paramref name="key"/> in the view.</summary>
    public int OwnerIndex(in Key key) => KeyMapper.Shared(torus).OwnerIndex(key, Servers);

    /// <summary>Whether this server owns <paramref name="key"/> in the view.</summary>
    public bool IsOwnedHere(in Key key) => OwnerIndex(key) == self;

    /// <summary>Takes <paramref name="lost"/> out of the view; returns those that were still in it.</summary>
    public List<Coordinate> Remove(IReadOnlyList<Coordinate> lost)
    {
        var removed = new List<Coordinate>();
        foreach (var server in lost)
        {
            int index = torus.IndexOf(server);
            if (Servers.Contains(index))
            {
                Servers.Remove(index);
                removed.Add(server);
            }
        }
        return removed;
    }
}

using Camdoop.ChunkStore;
using Camdoop.JobControl.Channel;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// What the coordinator and the worker of one server share: the node, the reliable channel, the network's view of
/// who is alive, the options and the job's servers (the hosts' first indices; hosts past them are appliances).
/// </summary>
internal sealed class ControlContext(INodeContext node, ControlChannel channel, IControlNetwork network, JobControlOptions options, Torus servers,
    ChunkStoreService? store, IReadOnlyList<int> appliances)
{
    /// <summary>Hosts past the servers that take part in every stream shuffle (NetAgg's agg boxes).</summary>
    public IReadOnlyList<int> Appliances { get; } = appliances;

    public INodeContext Node { get; } = node;

    public ControlChannel Channel { get; } = channel;

    public IControlNetwork Network { get; } = network;

    public JobControlOptions Options { get; } = options;

    /// <summary>The job's servers: they map, reduce and coordinate. A prefix of <see cref="Hosts"/>.</summary>
    public Torus Servers { get; } = servers;

    /// <summary>Every host of the network: the servers, then appliances (NetAgg's agg boxes) that only merge and forward.</summary>
    public Torus Hosts => Node.Torus;

    /// <summary>The chunk store, where this server runs one; null where only its own disk's chunks are read.</summary>
    public ChunkStoreService? Store { get; } = store;

    public KeyMapper Mapper { get; } = KeyMapper.Shared(servers);

    public Coordinate Self => Node.Self;

    public int SelfIndex => Node.Torus.IndexOf(Node.Self);

    public long Now => Node.Now;

    public long UnixMs => Node.UnixTimeMilliseconds;

    public bool IsServer(Coordinate host) => Hosts.IndexOf(host) < Servers.Count;

    public bool IsReachable(Coordinate host) => host == Self || Network.IsReachable(host);

    /// <summary>The servers (not appliances) reachable now.</summary>
    public ServerSet ReachableServers()
    {
        var set = new ServerSet(Servers.Count);
        for (int i = 0; i < Servers.Count; i++)
        {
            if (IsReachable(Hosts.CoordinateOf(i)))
            {
                set.Add(i);
            }
        }
        return set;
    }

    /// <summary>The servers among <paramref name="hosts"/> (appliances left out), as a set for key ownership.</summary>
    public ServerSet ServerView(IEnumerable<Coordinate> hosts)
    {
        var set = new ServerSet(Servers.Count);
        foreach (var host in hosts)
        {
            int index = Hosts.IndexOf(host);
            if (index < Servers.Count)
            {
                set.Add(index);
            }
        }
        return set;
    }

    /// <summary>The owner of job <paramref name="jobId"/>'s control key among <paramref name="view"/>; null when the view is empty.</summary>
    public Coordinate? CoordinatorOf(ulong jobId, ServerSet view)
    {
        int owner = view.Count == 0 ? -1 : Mapper.OwnerIndex(JobKeys.ControlKey(jobId), view);
        return owner < 0 ? null : Hosts.CoordinateOf(owner);
    }

    public void Log(LogLevel level, string message) => Node.Log(level, message);
}

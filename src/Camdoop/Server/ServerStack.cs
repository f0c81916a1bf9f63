using Camdoop.ChunkStore;
using Camdoop.JobControl;
using Camdoop.JobControl.Channel;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Monitoring.Metrics;
using Camdoop.Monitoring.Service;
using Camdoop.Monitoring.Tables;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.Server;

/// <summary>Settings of the services one server runs; null parts take their defaults.</summary>
public sealed record ServerStackOptions
{
    public KeyRoutingOptions? Routing { get; init; }

    public ChunkStoreOptions? ChunkStore { get; init; }

    public CamdoopServiceOptions? Camdoop { get; init; }

    public JobControlOptions? JobControl { get; init; }

    /// <summary>How map tasks run; null: indexed run files in the server's data directory.</summary>
    public IMapTaskRunner? MapTasks { get; init; }

    /// <summary>What the monitoring tables report of the server's process (a real node's); null: nothing.</summary>
    public IServerStatsSource? ProcessStats { get; init; }

    /// <summary>What the metrics table reports of the server (a real node's whole status); null: its stack's counters.</summary>
    public IMetricSource? Metrics { get; init; }

    /// <summary>Byte streams to the other servers over a switch network, for TCP Camdoop jobs; null: none (such jobs fail here).</summary>
    public IStreamTransport? Streams { get; init; }

    public DirectShuffleOptions? Direct { get; init; }

    /// <summary>A TCP Camdoop job's aggregation trees over the servers in it; null: straight to each reducer.</summary>
    public Func<JobDescription, ServerSet, IAggregationPlan?>? Plans { get; init; }

    /// <summary>The job's servers when the hosts also hold appliances past them (NetAgg's agg boxes); null: every host is a server.</summary>
    public Torus? Servers { get; init; }

    /// <summary>The hosts past the servers that take part in every stream shuffle (NetAgg's agg boxes).</summary>
    public IReadOnlyList<int> Appliances { get; init; } = [];
}

/// <summary>
/// The services one server runs, defined once for every place a server runs: a real node, its warm-up, the simulator
/// and its experiments. On a torus (<see cref="OnTorus"/>), in this order: key routing, ping, the chunk store, the
/// Camdoop shuffle, job control (with the stream shuffle of TCP Camdoop when the server has byte streams to the others),
/// monitoring. On a switched network with no torus (<see cref="OnSwitches"/>, the simulator's switched designs): the
/// stream shuffle and job control only, over the network the caller gives. Each service is handed the services it
/// uses; none looks another up.
/// </summary>
public sealed class ServerStack
{
    private ServerStack(JobControlService jobControl)
    {
        JobControl = jobControl;
    }

    public KeyRoutingService? Routing { get; private init; }

    public PingService? Ping { get; private init; }

    public ChunkStoreService? Store { get; private init; }

    public CamdoopService? Camdoop { get; private init; }

    public DirectShuffleService? Direct { get; private init; }

    public JobControlService JobControl { get; }

    public MonitorService? Monitor { get; private init; }

    /// <summary>Registers a torus server's services on <paramref name="host"/>.</summary>
    public static ServerStack OnTorus(NodeHost host, ServerStackOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(host);
        options ??= new ServerStackOptions();
        var routing = KeyRoutingService.Install(host, options.Routing);
        var ping = new PingService(routing);
        host.Register(ping);
        var store = new ChunkStoreService(routing, options.ChunkStore);
        host.Register(store, store.Options.QueueFrames);
        host.Register(new ReReplicationService(store), store.Options.QueueFrames);
        var camdoop = new CamdoopService(routing, options.Camdoop);
        host.Register(camdoop, camdoop.Options.Shuffle.RuntimeQueueFrames);
        var direct = options.Streams is { } streams ? new DirectShuffleService(host, streams, options.Direct, options.Servers) : null;
        var jobControl = new JobControlService(
            new JobControlParts
            {
                Network = new RoutedControlNetwork(routing, host),
                Store = store,
                Camdoop = camdoop,
                Direct = direct,
                MapTasks = options.MapTasks,
                Servers = options.Servers,
                Plans = options.Plans,
            },
            options.JobControl);
        host.Register(jobControl);
        var monitor = new MonitorService(new CamdoopJobSource(camdoop, direct), options.ProcessStats, new ChunkStoreStorageSource(store), options.Metrics ?? new ServerMetricSource(host));
        host.Register(monitor);
        return new ServerStack(jobControl)
        {
            Routing = routing,
            Ping = ping,
            Store = store,
            Camdoop = camdoop,
            Direct = direct,
            Monitor = monitor,
        };
    }

    /// <summary>
    /// Registers the services of a host on a switched network on <paramref name="host"/>: the stream shuffle over
    /// <paramref name="streams"/> and job control over <paramref name="network"/>, mapping the chunks on its own disk.
    /// </summary>
    public static ServerStack OnSwitches(NodeHost host, IControlNetwork network, IStreamTransport streams, ServerStackOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(host);
        ArgumentNullException.ThrowIfNull(network);
        ArgumentNullException.ThrowIfNull(streams);
        options ??= new ServerStackOptions();
        var direct = new DirectShuffleService(host, streams, options.Direct, options.Servers);
        var jobControl = new JobControlService(
            new JobControlParts
            {
                Network = network,
                Direct = direct,
                MapTasks = options.MapTasks,
                Servers = options.Servers,
                Appliances = options.Appliances,
                Plans = options.Plans,
            },
            options.JobControl);
        host.Register(jobControl);
        return new ServerStack(jobControl) { Direct = direct };
    }
}

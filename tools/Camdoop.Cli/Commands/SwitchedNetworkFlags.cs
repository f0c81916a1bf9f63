using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Cli.Commands;

/// <summary>
/// The flags of a switched network and of TCP Camdoop on it (sim run, sim sweep): the network, the switches' queues,
/// the servers' NICs and TCP. Each is checked against the network and mode it needs.
/// </summary>
public static class SwitchedNetworkFlags
{
    /// <summary>Every network, as "torus (the CamCube) | switch (one full-bisection switch) | ...".</summary>
    public static readonly string NetworkHelp = string.Join(" | ", NetworkKinds.All.Select(k => $"{k.Name()} ({k.Topology().Description})"));

    /// <summary>Every network's name, as "torus, switch, ...".</summary>
    public static readonly string NetworkNames = string.Join(", ", NetworkKinds.All.Select(k => k.Name()));

    /// <summary>Flags that mean something only on a switched network, and those only with --mode tcp.</summary>
    private static readonly string[] SwitchFlags = ["switch-buffer", "ecn", "nics", "free-ports"];
    private static readonly string[] TcpFlags = ["tcp", "min-rto", "rwnd", "pacing-mbps", "send-buffer", "streams-per-server", "parallel-fetches"];

    private static readonly IReadOnlyDictionary<string, bool> CongestionControls = new Dictionary<string, bool>(StringComparer.Ordinal)
    {
        ["newreno"] = false,
        ["dctcp"] = true,
    };

    public static Command AddSwitchedNetworkOptions(this Command command, bool network = true)
    {
        ArgumentNullException.ThrowIfNull(command);
        if (network)
        {
            command.Option("network", NetworkHelp, "NET", "torus");
        }
        return command
            .Option("switch-buffer", "Switched networks: bytes of each switch port's output queue (drop-tail)", "SIZE", "256KB")
            .Option("ecn", "Switched networks: mark ECN-capable frames joining a queue this long; 0 = no marking (use with --tcp dctcp)", "SIZE", "0")
            .Option("nics", "Switched networks: NICs per server, 1 or 6 teamed", "N", "1")
            .Option("free-ports", "With grin: free ports per server cabled to servers of the same or a neighbouring rack, 0..5" +
                (network ? "" : "; a comma-separated list runs each"), network ? "N" : "LIST", "1")
            .Option("tcp", "With --mode tcp: newreno | dctcp (ECN-capable; set --ecn)", "CC", "newreno")
            .Option("min-rto", "With --mode tcp: smallest retransmission timeout", "DURATION", "200ms")
            .Option("rwnd", "With --mode tcp: every receiver's advertised window; 0 = unlimited", "SIZE", "0")
            .Option("pacing-mbps", "With --mode tcp: each connection sends at most this many Mbit/s, segments evenly spaced; 0 = unpaced", "RATE", "0")
            .Option("send-buffer", "With --mode tcp: bytes of a stream kept until acknowledged (the socket's send buffer)", "SIZE", "128KB")
            .Option("streams-per-server", "With --mode tcp: streams a server sends at once (one per reduce task elsewhere)", "N", "8")
            .Option("parallel-fetches", "With --mode tcp: streams a reducer (or aggregation vertex) admits at once; 0 = as many initial windows as the switch buffer holds", "N", "0")
            .Flag("push", "With --mode tcp: every stream sends at once, unadmitted (the incast-prone baseline)");
    }

    /// <summary>The network --network names.</summary>
    public static NetworkKind Kind(ParsedArguments args)
    {
        ArgumentNullException.ThrowIfNull(args);
        string text = args.Required("network");
        return NetworkKinds.TryParse(text, out var kind) ? kind
            : throw CliException.Usage($"{args.CommandPath}: --network '{text}' is not one of {NetworkNames}");
    }

    /// <summary>The switched network of <paramref name="kind"/> with the queue and NIC flags; null for the torus.</summary>
    /// <param name="args">The parsed flags.</param>
    /// <param name="kind">The network --network (or the sweep's first switched network) names.</param>
    /// <param name="grinListed">A sweep that runs grin among other networks: --free-ports is for those runs.</param>
    public static SwitchedNetworkOptions? Network(ParsedArguments args, NetworkKind kind, bool grinListed = false)
    {
        ArgumentNullException.ThrowIfNull(args);
        var topology = kind.Topology();
        if (topology.HasTorusLinks)
        {
            RejectGiven(args, SwitchFlags, "a switched network (--network switch, racks, fattree or grin)");
            return null;
        }
        var freePorts = FreePorts(args);
        if (!topology.CablesFreePorts && !grinListed && args.Strings("free-ports").Count > 0)
        {
            throw CliException.Usage($"{args.CommandPath}: --free-ports needs --network grin");
        }
        if (!grinListed && freePorts.Count > 1)
        {
            throw CliException.Usage($"{args.CommandPath}: --free-ports takes one count here");
        }
        long buffer = args.Bytes("switch-buffer");
        long ecn = args.Bytes("ecn");
        int nics = args.Int("nics", 1, 6);
        if (buffer < 9 * 1024 || buffer > 1L << 30)
        {
            throw CliException.Usage($"{args.CommandPath}: --switch-buffer must hold a jumbo frame and be at most 1GB, not {buffer} bytes");
        }
        if (ecn < 0 || ecn > buffer)
        {
            throw CliException.Usage($"{args.CommandPath}: --ecn must be between 0 and the switch buffer ({buffer} bytes)");
        }
        if (nics is not (1 or 6))
        {
            throw CliException.Usage($"{args.CommandPath}: --nics is 1 or 6 (teamed), not {nics}");
        }
        if (topology.CablesFreePorts && nics != 1)
        {
            throw CliException.Usage($"{args.CommandPath}: --network grin has one NIC per server (its other ports are the free ones)");
        }
        return new SwitchedNetworkOptions
        {
            Kind = kind,
            PortBufferBytes = (int)buffer,
            EcnThresholdBytes = (int)ecn,
            NicsPerServer = nics,
            FreePorts = topology.CablesFreePorts ? freePorts[0] : 0,
        };
    }

    /// <summary>--free-ports: one count (sim run) or a list of them (sim sweep), each 0 to 5.</summary>
    public static IReadOnlyList<int> FreePorts(ParsedArguments args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var counts = new List<int>();
        foreach (string item in args.Required("free-ports").Split(',', StringSplitOptions.TrimEntries))
        {
            if (!int.TryParse(item, NumberStyles.Integer, CultureInfo.InvariantCulture, out int count) || count is < 0 or > 5)
            {
                throw CliException.Usage($"{args.CommandPath}: --free-ports takes counts from 0 to 5 (a server's six ports less its NIC), not '{item}'");
            }
            if (!counts.Contains(count))
            {
                counts.Add(count);
            }
        }
        return counts;
    }

    /// <summary>
    /// --mode, or when it is not given the only mode the network runs: camdoop on the torus, tcp on a switched network.
    /// </summary>
    public static ShuffleMode Mode(ParsedArguments args, NetworkKind kind)
    {
        ArgumentNullException.ThrowIfNull(args);
        if (args.Has("mode"))
        {
            return args.Choice("mode", ShuffleModes.All);
        }
        return kind.Topology().HasTorusLinks ? ShuffleMode.Camdoop : ShuffleMode.Tcp;
    }

    /// <summary>
    /// Checks that <paramref name="mode"/> can run on <paramref name="kind"/>: the Camdoop modes need the torus's
    /// trees, tcp a switch. A mismatch is one usage line.
    /// </summary>
    public static void CheckMode(ParsedArguments args, ShuffleMode mode, NetworkKind kind)
    {
        ArgumentNullException.ThrowIfNull(args);
        bool torus = kind.Topology().HasTorusLinks;
        if (mode == ShuffleMode.Tcp && torus)
        {
            throw CliException.Usage($"{args.CommandPath}: --mode tcp shuffles through a switch: add --network switch, racks, fattree or grin");
        }
        if (mode != ShuffleMode.Tcp && !torus)
        {
            throw CliException.Usage($"{args.CommandPath}: --mode {mode.Name()} shuffles over the torus's trees; on --network {kind.Name()} use --mode tcp");
        }
    }

    /// <summary>TCP's settings from the flags; rejects them when no run uses TCP.</summary>
    public static (TcpOptions Tcp, int SendBuffer, DirectShuffleOptions Direct) Tcp(ParsedArguments args, bool usesTcp)
    {
        ArgumentNullException.ThrowIfNull(args);
        if (!usesTcp)
        {
            RejectGiven(args, TcpFlags, "--mode tcp");
            if (args.Flag("push"))
            {
                throw CliException.Usage($"{args.CommandPath}: --push needs --mode tcp");
            }
            return (new TcpOptions(), 0, new DirectShuffleOptions());
        }
        bool dctcp = args.Choice("tcp", CongestionControls);
        long minRto = args.Nanoseconds("min-rto");
        long rwnd = args.Bytes("rwnd");
        long sendBuffer = args.Bytes("send-buffer");
        double pacing = args.Double("pacing-mbps", 0, 400_000);
        int streams = args.Int("streams-per-server", 1, 1 << 20);
        int fetches = args.Int("parallel-fetches", 0, 1 << 20);
        bool push = args.Flag("push");
        if (push && args.Strings("parallel-fetches").Count > 0)
        {
            throw CliException.Usage($"{args.CommandPath}: --parallel-fetches bounds admitted streams; --push admits none");
        }
        if (minRto < 1_000 || minRto > 60_000_000_000)
        {
            throw CliException.Usage($"{args.CommandPath}: --min-rto must be between 1us and 60s");
        }
        if (rwnd != 0 && (rwnd < TcpWire.MaxSegmentSize || rwnd > 1L << 30))
        {
            throw CliException.Usage($"{args.CommandPath}: --rwnd must be 0 (unlimited) or between one segment ({TcpWire.MaxSegmentSize} bytes) and 1GB");
        }
        if (sendBuffer < TcpWire.MaxSegmentSize || sendBuffer > 1L << 30)
        {
            throw CliException.Usage($"{args.CommandPath}: --send-buffer must be between one segment ({TcpWire.MaxSegmentSize} bytes) and 1GB");
        }
        var tcp = new TcpOptions { Dctcp = dctcp, MinRto = minRto, ReceiveWindowBytes = (int)rwnd, PacingBitsPerSecond = (long)(pacing * 1e6) };
        return (tcp, (int)sendBuffer, new DirectShuffleOptions { ConcurrentStreams = streams, ParallelFetches = fetches, Push = push });
    }

    private static void RejectGiven(ParsedArguments args, string[] flags, string needs)
    {
        foreach (string flag in flags)
        {
            if (args.Strings(flag).Count > 0)
            {
                throw CliException.Usage($"{args.CommandPath}: --{flag} needs {needs}");
            }
        }
    }
}

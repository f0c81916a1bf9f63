using System.Runtime.InteropServices;
using Camdoop.Cli.CommandLine;
using Camdoop.FrontEnd.Wire;
using Camdoop.Hosting;
using Camdoop.Hosting.Logging;
using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop node --config node.json`: runs one CamCube server until SIGTERM or SIGINT.</summary>
public static class NodeCommand
{
    public static Command Create() =>
        new Command("node", "Run one CamCube server: raw-Ethernet links on its six ports, key routing, chunk store, Camdoop, front-end.")
        {
            Details = "The config names the server's coordinate, the torus, the interface cabled to each port, its data\n" +
                      "directory and, on the switch network, its uplink address and front-end port (see --example).\n" +
                      "Needs root or CAP_NET_RAW. Logs to the config's log file (or stderr), as text or JSON; stops cleanly on SIGTERM or SIGINT.\n" +
                      "With --check-config it starts nothing: it checks all the node needs, prints 'config OK: ...' or one line, exit 0 or 1.",
        }
            .Option("config", "Node config file (JSON)", "FILE")
            .Flag("example", "Print an example config and exit")
            .Flag("check-config", "Check the config, certificates, interfaces, data directory and privileges, print one line and exit")
            .Flag("no-warm-up", "Start at once, without first running small jobs on a simulated cube to compile the job code paths")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        if (args.Flag("example"))
        {
            Console.Out.WriteLine(System.Text.Json.JsonSerializer.Serialize(Example, NodeConfig.JsonOptions));
            return 0;
        }
        if (args.Flag("check-config"))
        {
            Console.Out.WriteLine(NodeConfigCheck.Run(args.Required("config")));
            return 0;
        }
        NodeSettings settings;
        try
        {
            settings = NodeConfig.Load(args.Required("config")).Validate();
        }
        catch (NodeConfigException e)
        {
            throw new CliException(e.Message);
        }
        using var stop = new ManualResetEventSlim();
        using var term = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);
        using var interrupt = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        if (settings.WarmUp && !args.Flag("no-warm-up"))
        {
            WarmUp(settings);
        }
        CamdoopNode node;
        try
        {
            node = CamdoopNode.Start(settings);
        }
        catch (Exception e) when (e is RawEthernetException or FrontEndException or IOException or UnauthorizedAccessException)
        {
            throw new CliException($"node {settings.Self.Name}: {e.Message}");
        }
        using (node)
        {
            Console.Out.WriteLine($"node {settings.Self.Name} of {settings.Torus} running (pid {Environment.ProcessId}); " +
                                  $"log {(settings.LogFile == NodeLogging.StandardError ? "stderr" : settings.LogFile)}; status {node.StatusPath}" +
                                  (node.FrontEnd is { } fe ? $"; front-end {fe.EndPoint}" : ""));
            Console.Out.Flush();
            stop.Wait();
            node.Stop();
        }
        Console.Out.WriteLine($"node {settings.Self.Name} stopped");
        return 0;

        void OnSignal(PosixSignalContext context)
        {
            context.Cancel = true;
            stop.Set();
        }
    }

    /// <summary>Runs <see cref="NodeWarmUp"/> in the node's data directory; a failed warm-up costs speed only, so the node starts anyway.</summary>
    private static void WarmUp(NodeSettings settings)
    {
        try
        {
            Console.Out.WriteLine($"node {settings.Self.Name}: {NodeWarmUp.Run(Path.Combine(settings.DataDirectory, "warm-up"))}");
        }
        catch (Exception e) when (e is InvalidOperationException or IOException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine($"node {settings.Self.Name}: warm-up skipped: {e.Message}");
        }
    }

    private static NodeConfig Example => new()
    {
        Coordinate = "0,0,0",
        Torus = "3x3x3",
        Ports = new Dictionary<string, string>
        {
            ["+X"] = "enp1s0f0",
            ["-X"] = "enp1s0f1",
            ["+Y"] = "enp2s0f0",
            ["-Y"] = "enp2s0f1",
            ["+Z"] = "enp3s0f0",
            ["-Z"] = "enp3s0f1",
        },
        DataDirectory = "/var/lib/camdoop",
        UplinkAddress = "192.168.10.1",
        FrontEndPort = 7070,
        CertsDirectory = "/etc/camdoop/certs",
        LogFile = "/var/log/camdoop/node.log",
        LinkDriver = LinkDrivers.Default.Name(),
        JobAssemblyDirectory = "/opt/camdoop/jobs",
    };
}

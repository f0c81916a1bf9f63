using Camdoop.Cli.CommandLine;

namespace Camdoop.Cli.Commands;

/// <summary>The `camdoop` command tree.</summary>
public static class RootCommand
{
    public static Command Create()
    {
        var root = new Command("camdoop", "Camdoop: MapReduce with on-path aggregation on a CamCube 3D-torus cluster.")
        {
            Details = "Run 'camdoop <command> --help' for the options of a command.",
        };
        root.Add(DemoCommand.Create());
        root.Add(new Command("sim", "Run the packet-level simulator: jobs, sweeps, ping, restore after a server dies.").Add(SimRunCommand.Create()).Add(SimSweepCommand.Create()).Add(SimPingCommand.Create()).Add(SimRestoreCommand.Create()));
        root.Add(CalibrateCommand.Create());
        root.Add(DatagenCommand.Create());
        root.Add(NodeCommand.Create());
        root.Add(TestbedCommand.Create());
        root.Add(PutCommand.Create());
        root.Add(GetCommand.Create());
        root.Add(LsCommand.Create());
        root.Add(RmCommand.Create());
        root.Add(FsckCommand.Create());
        root.Add(DecommissionCommand.Create());
        root.Add(DecommissionCommand.CreateRecommission());
        root.Add(PingCommand.Create());
        root.Add(QueryCommand.Create());
        root.Add(WebCommand.Create());
        root.Add(MetricsCommand.Create());
        root.Add(CertsCommand.Create());
        root.Add(LimitCommand.Create());
        root.Add(SubmitCommand.Create());
        root.Add(StatusCommand.Create());
        root.Add(CatCommand.Create());
        root.Add(JobsCommand.Create());
        root.Add(KillCommand.Create());
        return root;
    }
}

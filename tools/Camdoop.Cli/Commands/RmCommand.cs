using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop rm NAME`: deletes a dataset from every replica.</summary>
public static class RmCommand
{
    public static Command Create() =>
        new Command("rm", "Delete a dataset from the chunk store: every replica of its manifest and chunks, on every server.")
            .Argument("name", "Dataset name")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("json", "Print the result as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string name = CommonOptions.DatasetName(args, args.Argument("name")!);
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new RmRequest { Name = name }));
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new { name = reply.Name, replicas = reply.Replicas, bytes = reply.Bytes, unanswered = reply.Unanswered, frontend = client.Address });
        }
        else
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"deleted '{reply.Name}': {Units.Count(reply.Replicas, "replica")}, {Units.Bytes(reply.Bytes)}"));
        }
        if (reply.Unanswered.Count > 0)
        {
            Console.Error.WriteLine($"warning: no answer from {string.Join(' ', reply.Unanswered)}; they drop its replicas when they next answer (a tombstone is kept until then)");
        }
        return 0;
    }
}

using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop ls`: the datasets in the chunk store.</summary>
public static class LsCommand
{
    public static Command Create() =>
        new Command("ls", "List the datasets in the chunk store (every server is asked which manifests it holds).")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("json", "Print as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new LsRequest()));
        var datasets = reply.Datasets;
        var unanswered = reply.Unanswered;
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                datasets = datasets.Select(d => new { name = d.Name, bytes = d.Bytes, chunks = d.Chunks, format = d.Format }),
                unanswered,
            });
            return 0;
        }
        if (datasets.Count == 0)
        {
            Console.Out.WriteLine("no datasets");
        }
        else
        {
            Console.Out.WriteLine($"{"NAME",-32} {"SIZE",12} {"CHUNKS",7}  FORMAT");
            foreach (var d in datasets)
            {
                Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{d.Name,-32} {Units.Bytes(d.Bytes),12} {d.Chunks,7}  {d.Format}"));
            }
        }
        if (unanswered.Count > 0)
        {
            Console.Error.WriteLine($"warning: no answer from {string.Join(' ', unanswered)}; datasets stored only there may be missing");
        }
        return 0;
    }
}

using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop ls`: the datasets in the chunk store.</summary>
public static class LsCommand
{
    public static Command Create() =>
        new Command("ls", "List the datasets in the chunk store (every server is asked which manifests it holds).")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Flag("json", "Print as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new WireMessage("ls")));
        var datasets = reply.GetList("datasets").Cast<WireMessage>().ToList();
        var unanswered = reply.GetList("unanswered").Cast<string>().ToList();
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                datasets = datasets.Select(d => new { name = d.GetString("name"), bytes = d.GetInt64("bytes"), chunks = d.GetInt64("chunks"), format = d.GetString("format") }),
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
                    $"{d.GetString("name"),-32} {Units.Bytes(d.GetInt64("bytes")),12} {d.GetInt64("chunks"),7}  {d.GetString("format")}"));
            }
        }
        if (unanswered.Count > 0)
        {
            Console.Error.WriteLine($"warning: no answer from {string.Join(' ', unanswered)}; datasets stored only there may be missing");
        }
        return 0;
    }
}

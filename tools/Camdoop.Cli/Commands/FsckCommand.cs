using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop fsck [NAME]`: each dataset's chunks against the replicas the servers hold.</summary>
public static class FsckCommand
{
    /// <summary>Chunk ids the stderr line names per dataset at most.</summary>
    private const int NamedChunks = 5;

    public static Command Create() =>
        new Command("fsck", "Check datasets against their replicas: under-replicated, missing and corrupt chunks (every server is asked what it holds).")
            .Argument("name", "Dataset name (default: every dataset)", required: false)
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("json", "Print as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string? name = args.Argument("name") is { } n ? CommonOptions.DatasetName(args, n) : null;
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new FsckRequest { Name = name }));
        return Report(reply, args.Flag("json"), Console.Out, Console.Error);
    }

    /// <summary>Prints the reply; returns the exit code: 0 when every chunk has a good replica, else 1 with one line on stderr.</summary>
    public static int Report(FsckReply reply, bool json, TextWriter output, TextWriter error)
    {
        ArgumentNullException.ThrowIfNull(reply);
        ArgumentNullException.ThrowIfNull(output);
        ArgumentNullException.ThrowIfNull(error);
        if (json)
        {
            JsonOutput.Write(output, new
            {
                chunks = reply.Chunks,
                replicas = reply.Replicas,
                underReplicated = reply.UnderReplicated,
                missing = reply.Missing,
                corrupt = reply.Corrupt,
                required = reply.Required,
                liveServers = reply.LiveServers,
                datasets = reply.Datasets.Select(d => new
                {
                    name = d.Name,
                    chunks = d.Chunks,
                    replicas = d.Replicas,
                    underReplicated = d.UnderReplicated,
                    missing = d.Missing,
                    corrupt = d.Corrupt,
                    manifestReplicas = d.ManifestReplicas,
                    error = d.Error,
                    problemCount = d.ProblemCount,
                    problems = d.Problems.Select(c => new
                    {
                        chunk = c.Chunk,
                        index = c.Index,
                        good = c.Good,
                        replicas = c.Replicas.Select(r => new { server = r.Server, state = r.State }),
                        placement = c.Placement,
                    }),
                }),
                unanswered = reply.Unanswered,
            });
        }
        else
        {
            WriteText(reply, output);
        }
        var lost = reply.Datasets.Where(d => d.Missing > 0 || d.Error is not null).Select(Lost).ToList();
        if (lost.Count == 0)
        {
            return 0;
        }
        error.WriteLine($"fsck: {string.Join("; ", lost)}");
        return 1;
    }

    private static void WriteText(FsckReply reply, TextWriter output)
    {
        if (reply.Datasets.Count == 0)
        {
            output.WriteLine("no datasets");
        }
        else
        {
            var rows = reply.Datasets
                .Select(d => Row(d.Name, d.Chunks, d.Replicas, d.UnderReplicated, d.Missing, d.Corrupt))
                .Append(Row("total", reply.Chunks, reply.Replicas, reply.UnderReplicated, reply.Missing, reply.Corrupt))
                .ToList();
            output.Write(TextTable.Format(["DATASET", "CHUNKS", "REPLICAS", "UNDER-REPLICATED", "MISSING", "CORRUPT"], rows));
        }
        foreach (var d in reply.Datasets)
        {
            if (d.Error is not null)
            {
                output.WriteLine($"{d.Name}: manifest unreadable: {d.Error}");
            }
            foreach (var c in d.Problems)
            {
                string what = c.Index < 0 ? "manifest" : string.Create(CultureInfo.InvariantCulture, $"chunk {c.Index}");
                string held = c.Replicas.Count == 0 ? "no replica" : string.Join(", ", c.Replicas.Select(r => $"{r.Server} {r.State}"));
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{d.Name}: {what} {c.Chunk}: {c.Good} of {reply.Required} good ({held}); placed on {string.Join(' ', c.Placement)}"));
            }
            if (d.ProblemCount > d.Problems.Count)
            {
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{d.Name}: and {d.ProblemCount - d.Problems.Count} more problem chunks"));
            }
        }
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{reply.LiveServers} servers answered; a chunk needs {reply.Required} good replicas"));
        if (reply.Unanswered.Count > 0)
        {
            output.WriteLine($"no answer from {string.Join(' ', reply.Unanswered)}: their replicas are not counted");
        }
    }

    private static List<string> Row(string name, long chunks, long replicas, long under, long missing, long corrupt) =>
        [name, .. new[] { chunks, replicas, under, missing, corrupt }.Select(v => v.ToString(CultureInfo.InvariantCulture))];

    /// <summary>What the dataset lost, for the stderr line.</summary>
    private static string Lost(FsckDatasetInfo d)
    {
        if (d.Error is not null)
        {
            return $"dataset '{d.Name}' has no readable manifest ({d.Error})";
        }
        var ids = d.Problems.Where(c => c.Index >= 0 && c.Good == 0).Select(c => c.Chunk).ToList();
        string named = string.Join(", ", ids.Take(NamedChunks));
        if (d.Missing > NamedChunks)
        {
            named += string.Create(CultureInfo.InvariantCulture, $" and {d.Missing - NamedChunks} more");
        }
        return string.Create(CultureInfo.InvariantCulture,
            $"dataset '{d.Name}' has {Units.Count(d.Missing, "chunk")} with no good replica: {named}");
    }
}

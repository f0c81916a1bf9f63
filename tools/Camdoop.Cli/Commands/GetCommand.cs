using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;
using Camdoop.Records;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop get NAME [--out FILE]`: reads a dataset back from the chunk store.</summary>
public static class GetCommand
{
    public static Command Create() =>
        new Command("get", "Read a dataset back (to a file or stdout); every chunk's checksum is checked.")
            .Argument("name", "Dataset name")
            .Option("out", "Output file (default: stdout)", "FILE")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string name = CommonOptions.DatasetName(args, args.Argument("name")!);
        string? outPath = args.String("out");
        using var client = FrontEndAddress.Connect(args);
        var manifest = FrontEndAddress.Call(() => client.Call(new GetManifestRequest { Name = name }));
        var chunks = manifest.Chunks;
        long total = manifest.TotalBytes;
        string temp = outPath is null ? "" : outPath + ".part";
        using (var output = outPath is null ? Console.OpenStandardOutput() : new FileStream(temp, FileMode.Create, FileAccess.Write))
        {
            long written = 0;
            using var bar = outPath is null ? null : new ProgressBar("get");
            for (int i = 0; i < chunks.Count; i++)
            {
                var chunk = chunks[i];
                long length = chunk.Length;
                ulong checksum = (ulong)chunk.Checksum;
                var hash = new XxHash64();
                long received = 0;
                FrontEndAddress.Call(() => client.Call(new GetChunkRequest { Chunk = chunk.Id }, part =>
                {
                    var data = part.Data.Span;
                    if (part.Offset != received)
                    {
                        throw new CliException($"get: chunk {i} of '{name}' arrived out of order");
                    }
                    hash.Append(data);
                    output.Write(data);
                    received += data.Length;
                    written += data.Length;
                    bar?.Report(total == 0 ? 1 : (double)written / total, $"chunk {i + 1}/{chunks.Count}, {Units.Bytes(written)}");
                }));
                if (received != length || hash.GetDigest() != checksum)
                {
                    throw new CliException($"get: chunk {i} of '{name}' does not match its manifest (length or checksum)");
                }
            }
        }
        if (outPath is not null)
        {
            File.Move(temp, outPath, overwrite: true);
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"wrote '{name}' to {outPath}: {chunks.Count} chunks, {Units.Bytes(total)}"));
        }
        return 0;
    }
}

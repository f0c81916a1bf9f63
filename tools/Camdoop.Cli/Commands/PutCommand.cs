using System.Diagnostics;
using System.Globalization;
using Camdoop.ChunkStore;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Records;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop put FILE --name NAME`: stores a file as a dataset in the cube's chunk store.</summary>
public static class PutCommand
{
    public static Command Create() =>
        new Command("put", "Store a file as a dataset: cut into chunks (records never split), three replicas each.")
        {
            Details = "A file smaller than servers x chunk size is cut into one chunk per server, so every server maps.\n" +
                      "The command returns once every chunk and the manifest are on all their live replicas.",
        }
            .Argument("file", "The file to store")
            .Option("name", "Dataset name (letters, digits, '.', '_', '-')", "NAME")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Option("chunk-size", "Largest chunk", "SIZE", "64MB")
            .Option("format", "text (lines) or recordsN (fixed N-byte records, e.g. records100)", "FORMAT", "text")
            .Flag("json", "Print the result as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string path = args.Argument("file")!;
        string name = CommonOptions.DatasetName(args, args.Required("name"));
        var (format, recordSize) = ParseFormat(args.Required("format"));
        long chunkSize = args.Bytes("chunk-size");
        if (chunkSize < 1 || chunkSize > ChunkMeta.MaxChunkBytes)
        {
            throw CliException.Usage($"put: --chunk-size must be between 1 byte and {Units.Bytes(ChunkMeta.MaxChunkBytes)}");
        }
        if (!File.Exists(path))
        {
            throw new CliException($"put: no such file: {path}");
        }
        using var client = FrontEndAddress.Connect(args);
        var clock = Stopwatch.StartNew();
        var (chunkCount, fileLength, replicaCounts, end) = Store(client, path, name, format, recordSize, chunkSize);
        double seconds = clock.Elapsed.TotalSeconds;
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                name,
                frontend = client.Address,
                chunks = chunkCount,
                bytes = fileLength,
                minReplicas = replicaCounts.Count == 0 ? 0 : replicaCounts.Min(),
                seconds,
            });
        }
        else
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"stored '{name}': {end.Chunks} chunks, {Units.Bytes(end.Bytes)}, {replicaCounts.DefaultIfEmpty(0).Min()}-{replicaCounts.DefaultIfEmpty(0).Max()} replicas per chunk, in {Units.Seconds(seconds)}"));
        }
        return 0;
    }

    /// <summary>Stores the file at <paramref name="path"/> as dataset <paramref name="name"/> through <paramref name="client"/>, with a progress bar.</summary>
    internal static (int Chunks, long Bytes, List<int> ReplicaCounts, PutEndReply End) Store(FrontEndClient client, string path, string name,
        DatasetFormat format, int recordSize, long chunkSize)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 20);
        int servers = (int)FrontEndAddress.Call(() => client.Call(new HelloRequest())).Servers;
        IReadOnlyList<ChunkRange> chunks;
        try
        {
            chunks = DatasetChunker.Split(file, format, recordSize, chunkSize, servers);
        }
        catch (InvalidDataException e)
        {
            throw new CliException($"put: {path}: {e.Message}");
        }
        FrontEndAddress.Call(() => client.Call(new PutBeginRequest
        {
            Name = name,
            Format = format == DatasetFormat.Text ? "text" : "records",
            RecordSize = recordSize,
            Chunks = chunks.Count,
            TotalBytes = file.Length,
        }));
        var buffer = new byte[MessageFraming.MaxDataPartBytes];
        long sent = 0;
        var replicaCounts = new List<int>();
        using (var bar = new ProgressBar("put"))
        {
            for (int i = 0; i < chunks.Count; i++)
            {
                var range = chunks[i];
                var hash = new XxHash64();
                long offset = 0;
                do
                {
                    int n = (int)Math.Min(buffer.Length, range.Length - offset);
                    file.Seek(range.Offset + offset, SeekOrigin.Begin);
                    file.ReadExactly(buffer, 0, n);
                    hash.Append(buffer.AsSpan(0, n));
                    bool final = offset + n == range.Length;
                    var request = new PutChunkRequest
                    {
                        Index = i,
                        Length = range.Length,
                        Offset = offset,
                        Data = buffer.AsMemory(0, n),
                        Final = final,
                        Checksum = final ? (long)hash.GetDigest() : null,
                    };
                    var reply = FrontEndAddress.Call(() => client.Call(request));
                    if (final)
                    {
                        replicaCounts.Add(reply.Replicas?.Count ?? 0);
                    }
                    offset += n;
                    sent += n;
                    bar.Report(file.Length == 0 ? (double)(i + 1) / chunks.Count : (double)sent / file.Length, $"chunk {i + 1}/{chunks.Count}, {Units.Bytes(sent)}");
                }
                while (offset < range.Length);
            }
        }
        var end = FrontEndAddress.Call(() => client.Call(new PutEndRequest()));
        return (chunks.Count, file.Length, replicaCounts, end);
    }

    internal static (DatasetFormat Format, int RecordSize) ParseFormat(string text)
    {
        if (text == "text")
        {
            return (DatasetFormat.Text, 0);
        }
        if (text.StartsWith("records", StringComparison.Ordinal)
            && int.TryParse(text.AsSpan(7), NumberStyles.None, CultureInfo.InvariantCulture, out int size) && size > 0 && size <= InputFormatLimits.MaxRecordBytes)
        {
            return (DatasetFormat.Records, size);
        }
        throw CliException.Usage($"put: --format must be text or recordsN (e.g. records100), not '{text}'");
    }
}

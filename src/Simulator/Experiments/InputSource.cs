using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.Experiments;

/// <summary>
/// Each server's input for a simulated job: generated on demand (deterministic per server, so servers can be
/// produced in parallel), read from per-server files, or one user file split evenly at record boundaries.
/// </summary>
internal sealed class InputSource
{
    private readonly Func<int, byte[]> _server;
    private readonly DatasetGenerator? _generator;
    private long _totalBytes;

    private InputSource(Func<int, byte[]> server, DatasetGenerator? generator = null)
    {
        _server = server;
        _generator = generator;
    }

    public long TotalBytes => Interlocked.Read(ref _totalBytes);

    public byte[] Server(int server)
    {
        var data = _server(server);
        Interlocked.Add(ref _totalBytes, data.Length);
        return data;
    }

    /// <summary>
    /// The input of <paramref name="server"/>, generated into <paramref name="buffer"/> where the data set supports
    /// it (valid until the next call with that buffer); for callers that do not keep it and only map it. Its lines
    /// are not shuffled: the map output is the same either way (the map sorts), and nothing else sees the input.
    /// </summary>
    public ReadOnlyMemory<byte> Server(int server, ref byte[] buffer)
    {
        var data = _generator is null ? _server(server) : _generator.GenerateServer(server, ref buffer, shuffleLines: false);
        Interlocked.Add(ref _totalBytes, data.Length);
        return data;
    }

    public static InputSource Create(JobSimulationOptions options, IMapReduceJob job, int servers)
    {
        if (options.Workload != Workload.Files)
        {
            var kind = options.Workload switch
            {
                Workload.Synthetic => DatasetKind.Synthetic,
                Workload.Sort => DatasetKind.Sort,
                Workload.WordCount => DatasetKind.Text,
                _ => DatasetKind.TopK,
            };
            var generator = new DatasetGenerator(new DatasetOptions
            {
                Kind = kind,
                Servers = servers,
                BytesPerServer = options.Settings.BytesPerServer,
                Seed = options.Settings.Seed,
                OutputRatio = options.OutputRatio,
            });
            // Lines in generation order: the map output is the same either way (the map sorts; see Server(int, ref byte[])).
            return new InputSource(s => generator.GenerateServer(s, shuffleLines: false), generator);
        }
        string path = options.InputPath!;
        if (Directory.Exists(path))
        {
            return new InputSource(s =>
            {
                string file = Path.Combine(path, DatasetGenerator.FileName(s));
                return File.Exists(file) ? File.ReadAllBytes(file) : [];
            });
        }
        var whole = File.ReadAllBytes(path);
        if (job.InputFormat.Kind == InputKind.FixedRecords && whole.Length % job.InputFormat.RecordSize != 0)
        {
            // Refused before anything is mapped: a partial record would otherwise fail one server's map task.
            throw new InvalidDataException(FormattableString.Invariant(
                $"input '{path}' is {whole.Length:N0} bytes, not a whole number of {job.InputFormat.RecordSize}-byte records ({job.Name} reads {job.InputFormat})"));
        }
        var bounds = Split(whole, job.InputFormat, servers);
        return new InputSource(s => whole[bounds[s]..bounds[s + 1]]);
    }

    /// <summary>Cut points giving each server about 1/N of the bytes, moved forward to a record boundary.</summary>
    internal static int[] Split(byte[] data, InputFormat format, int servers)
    {
        var cuts = new int[servers + 1];
        cuts[servers] = data.Length;
        for (int s = 1; s < servers; s++)
        {
            int cut = (int)((long)data.Length * s / servers);
            if (format.Kind == InputKind.FixedRecords)
            {
                cut -= cut % format.RecordSize;
            }
            else
            {
                int newline = cut == 0 ? -1 : Array.IndexOf(data, (byte)'\n', cut - 1);
                cut = newline < 0 ? data.Length : newline + 1;
            }
            cuts[s] = Math.Max(cuts[s - 1], cut);
        }
        return cuts;
    }
}

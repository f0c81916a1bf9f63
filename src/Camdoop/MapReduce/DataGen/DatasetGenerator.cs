using System.Globalization;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.DataGen;

/// <summary>
/// Entry point for `camdoop datagen` and the simulator harness: one deterministic input per server, either as a
/// byte array (<see cref="GenerateServer(int)"/>) or as files server-NNNNN.input in a directory (<see cref="WriteFiles"/>).
/// </summary>
public sealed class DatasetGenerator
{
    private readonly Func<int, byte[]> _generate;
    private readonly SyntheticDataGenerator? _synthetic;

    public DatasetGenerator(DatasetOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(options.Servers, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(options.BytesPerServer, 1);
        Options = options;
        switch (options.Kind)
        {
            case DatasetKind.Synthetic:
                _synthetic = new SyntheticDataGenerator(options.Servers, options.OutputRatio, options.BytesPerServer, options.Seed);
                _generate = _synthetic.GenerateServer;
                JobName = SyntheticJob.JobName;
                break;
            case DatasetKind.Sort:
                _generate = new SortDataGenerator(options.Servers, options.BytesPerServer, options.Seed).GenerateServer;
                JobName = SortJob.JobName;
                break;
            case DatasetKind.Text:
                _generate = new TextDataGenerator(options.Servers, options.BytesPerServer, options.Seed).GenerateServer;
                JobName = WordCountJob.JobName;
                break;
            case DatasetKind.TopK:
                _generate = new TopKDataGenerator(options.Servers, options.BytesPerServer, options.Seed).GenerateServer;
                JobName = TopKJob.JobName;
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(options), options.Kind, "unknown data set kind");
        }
    }

    public DatasetOptions Options { get; }

    /// <summary>The built-in job this data set is for.</summary>
    public string JobName { get; }

    /// <summary>For the synthetic kind: S of the generated keys.</summary>
    public double? AchievedOutputRatio => _synthetic?.AchievedOutputRatio;

    public static string FileName(int server) => string.Create(CultureInfo.InvariantCulture, $"server-{server:D5}.input");

    public byte[] GenerateServer(int server) => _generate(server);

    /// <summary>
    /// The input of <paramref name="server"/>; <paramref name="shuffleLines"/> false leaves synthetic lines in the order
    /// they were generated (see <see cref="SyntheticDataGenerator.GenerateServer(int, ref byte[], bool)"/>).
    /// </summary>
    public byte[] GenerateServer(int server, bool shuffleLines) =>
        _synthetic is null ? _generate(server) : _synthetic.GenerateServer(server, shuffleLines);

    /// <summary>
    /// The input of <paramref name="server"/>, written into <paramref name="buffer"/> (replaced by a larger one when
    /// too short) where the kind supports it, synthetic so far; a new array otherwise. For callers that keep no input,
    /// such as the simulator mapping every server's input thread by thread. <paramref name="shuffleLines"/> false
    /// leaves synthetic lines in the order they were generated (see <see cref="SyntheticDataGenerator.GenerateServer(int, ref byte[], bool)"/>).
    /// </summary>
    public ReadOnlyMemory<byte> GenerateServer(int server, ref byte[] buffer, bool shuffleLines = true)
    {
        if (_synthetic is null)
        {
            return _generate(server);
        }
        int length = _synthetic.GenerateServer(server, ref buffer, shuffleLines);
        return buffer.AsMemory(0, length);
    }

    /// <summary>Writes every server's input into <paramref name="directory"/>; reports each finished server.</summary>
    public DatasetSummary WriteFiles(string directory, IProgress<int>? progress = null)
    {
        Directory.CreateDirectory(directory);
        var files = new string[Options.Servers];
        var sizes = new long[Options.Servers];
        for (int s = 0; s < Options.Servers; s++)
        {
            var data = GenerateServer(s);
            files[s] = Path.Combine(directory, FileName(s));
            File.WriteAllBytes(files[s], data);
            sizes[s] = data.Length;
            progress?.Report(s + 1);
        }
        return new DatasetSummary
        {
            Options = Options,
            JobName = JobName,
            Files = files,
            BytesPerServer = sizes,
            AchievedOutputRatio = AchievedOutputRatio,
        };
    }
}

using BenchmarkDotNet.Attributes;
using Camdoop.MapReduce.DataGen;
using Camdoop.Runtime.Hosting;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// Generating one server's input: 2 MB of synthetic keys at S = 0.5 for 512 servers, a different server each time
/// into one reused buffer. With the lines shuffled (common keys among the server's unique ones) as `camdoop datagen`
/// writes them, or in generation order as `camdoop sim run` makes them before mapping them (<see cref="MapTaskBenchmark"/>).
/// Run: dotnet run -c Release --project tools/Camdoop.Benchmarks -- --filter *SyntheticInput* --job short
/// The process also prints the best per-operation thread CPU time ("// cpu-time ..." lines).
/// </summary>
[MemoryDiagnoser]
public class SyntheticInputBenchmark
{
    private const int Servers = 512;

    private readonly BestCpuTimes _cpu = new();
    private SyntheticDataGenerator _generator = null!;
    private byte[] _buffer = [];
    private int _server;
    private int _bytes;

    /// <summary>The 8x8x8 figures' data set: 512 servers, S = 0.5, 2 MB each, seed 1.</summary>
    internal static SyntheticDataGenerator FigureDataSet() => new(Servers, 0.5, 2L * 1024 * 1024, seed: 1);

    /// <summary>Whether the lines are shuffled (datagen's files) or left in generation order (the simulator's map phase).</summary>
    [Params(true, false)]
    public bool ShuffleLines { get; set; }

    [GlobalSetup]
    public void Setup() => _generator = FigureDataSet();

    [Benchmark]
    public int Generate()
    {
        _server = (_server + 1) % Servers;
        double start = ThreadCpuClock.Seconds();
        _bytes = _generator.GenerateServer(_server, ref _buffer, ShuffleLines);
        _cpu.Record(ShuffleLines ? "generate, lines shuffled" : "generate, lines in generation order", start);
        return _bytes;
    }

    [GlobalCleanup]
    public void Report()
    {
        foreach (var (what, seconds) in _cpu.Seconds)
        {
            Console.WriteLine($"// cpu-time {what}: best {seconds * 1e3:F2} ms of thread CPU time per server ({_bytes / seconds / 1e6:F0} MB/s per core)");
        }
        _cpu.Clear();
    }
}

using BenchmarkDotNet.Attributes;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.Runtime.Hosting;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// One server's map task in the simulator's map phase (with generating the input, a third of the 8x8x8 R=1 run's
/// wall time; see <see cref="SyntheticInputBenchmark"/>): 2 MB of synthetic input at S = 0.5 for 512 servers, split
/// into lines, mapped to (key, 1), sorted, combined and written as runs per reduce task and stripe, in memory or as a
/// run file on disk (what `camdoop sim run` does by default).
/// Run: dotnet run -c Release --project tools/Camdoop.Benchmarks -- --filter *MapTask* --job short
/// The process also prints the best per-operation thread CPU time ("// cpu-time ..." lines): the per-core figure on a
/// shared machine, where wall-clock means move with the neighbours.
/// </summary>
[MemoryDiagnoser]
public class MapTaskBenchmark
{
    private readonly BestCpuTimes _cpu = new();
    private byte[] _input = [];
    private string _directory = "";

    /// <summary>Reduce tasks R: 1 (six runs) or 512 (3,072 runs per server, the R = N end of the figures).</summary>
    [Params(1, 512)]
    public int ReduceTasks { get; set; }

    /// <summary>Whether the runs go to a run file on disk (the simulator's default) or stay in memory.</summary>
    [Params(false, true)]
    public bool OnDisk { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _input = SyntheticInputBenchmark.FigureDataSet().GenerateServer(0);
        _directory = Path.Combine(Path.GetTempPath(), $"camdoop-bench-map-{Environment.ProcessId}");
    }

    [Benchmark]
    public long Map()
    {
        double start = ThreadCpuClock.Seconds();
        long records;
        using (var output = MapTask.Run(new SyntheticJob(), _input, new MapTaskOptions
        {
            ReduceTasks = ReduceTasks,
            MapTaskId = 1,
            OutputDirectory = OnDisk ? _directory : null,
        }))
        {
            records = output.Stats.MapOutputRecords;
        }
        _cpu.Record($"map R={ReduceTasks} {(OnDisk ? "disk" : "memory")}", start);
        return records;
    }

    [GlobalCleanup]
    public void Report()
    {
        foreach (var (what, seconds) in _cpu.Seconds)
        {
            Console.WriteLine($"// cpu-time {what}: best {seconds * 1e3:F2} ms of thread CPU time per server "
                + $"({_input.Length / seconds / 1e6:F0} MB/s of input per core)");
        }
        _cpu.Clear();
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }
}

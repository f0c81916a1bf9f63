using BenchmarkDotNet.Attributes;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// Generating one server's input in the simulator's map phase: 2 MB of synthetic keys at S = 0.5 for 512 servers
/// (common keys shuffled with the server's unique ones), a different server each time into one reused buffer, as
/// <c>camdoop sim run</c> does before mapping it (<see cref="MapTaskBenchmark"/>).
/// Run: dotnet run -c Release --project tools/Camdoop.Benchmarks -- --filter *SyntheticInput* --job short
/// The process also prints the best per-operation thread CPU time ("// cpu-time ..." lines).
/// </summary>
[MemoryDiagnoser]
public class SyntheticInputBenchmark
{
    private const int Servers = 512;
    private const long BytesPerServer = 2L * 1024 * 1024;

    private SyntheticDataGenerator _generator = null!;
    private byte[] _buffer = [];
    private int _server;
    private double _bestCpuSeconds = double.MaxValue;
    private int _bytes;

    [GlobalSetup]
    public void Setup() => _generator = new SyntheticDataGenerator(Servers, 0.5, BytesPerServer, seed: 1);

    [Benchmark]
    public int Generate()
    {
        _server = (_server + 1) % Servers;
        double start = ThreadCpuClock.Seconds();
        _bytes = _generator.GenerateServer(_server, ref _buffer);
        double seconds = ThreadCpuClock.Seconds() - start;
        if (!double.IsNaN(seconds))
        {
            _bestCpuSeconds = Math.Min(_bestCpuSeconds, seconds);
        }
        return _bytes;
    }

    [GlobalCleanup]
    public void Report() => Console.WriteLine(
        $"// cpu-time generate: best {_bestCpuSeconds * 1e3:F2} ms of thread CPU time per server ({_bytes / _bestCpuSeconds / 1e6:F0} MB/s per core)");
}

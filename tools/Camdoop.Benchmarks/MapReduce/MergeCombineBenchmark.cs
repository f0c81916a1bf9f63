using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Merge;
using Camdoop.Runtime.Hosting;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// The on-path vertex hot path (the Camdoop paper, §4.1): merge seven sorted streams (six children plus the local run) and
/// combine equal keys, fed frame by frame (8,900-byte chunks, at most two buffered per input) and drained into a
/// 64 KiB output, as the shuffle transport will. "Combine" is Camdoop; "MergeOnly" is the no-agg baseline.
/// Run: dotnet run -c Release --project tools/Camdoop.Benchmarks -- --filter *MergeCombine* --job short
/// Besides BenchmarkDotNet's wall-clock columns, the benchmark process prints the best per-operation throughput in
/// thread CPU time ("// cpu-time ..." lines in the log): on a shared machine that is the per-core figure.
/// </summary>
[Config(typeof(Config))]
[MemoryDiagnoser]
public class MergeCombineBenchmark
{
    private const int FrameBytes = 8_900;

    private byte[][] _streams = [];
    private StreamMerger _combine = null!;
    private StreamMerger _merge = null!;
    private readonly byte[] _output = new byte[64 * 1024];
    private readonly int[] _offsets = new int[MergeStreams.Inputs];
    private readonly BestCpuTimes _cpu = new();
    private long _inputBytes;

    /// <summary>Output ratio S across the seven streams (0.5: roughly half the keys are shared by all seven).</summary>
    [Params(0.5)]
    public double OutputRatio { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _streams = MergeStreams.Build(OutputRatio);
        _inputBytes = _streams.Sum(s => (long)s.Length);
        var job = new SyntheticJob();
        _combine = new StreamMerger(job, MergeStreams.Inputs, MergeMode.Combine, 32 * 1024);
        _merge = new StreamMerger(job, MergeStreams.Inputs, MergeMode.Merge, 32 * 1024);
    }

    [Benchmark(Baseline = true)]
    public long Combine() => Run(_combine);

    [Benchmark]
    public long MergeOnly() => Run(_merge);

    [GlobalCleanup]
    public void Report()
    {
        foreach (var (mode, seconds) in _cpu.Seconds)
        {
            Console.WriteLine($"// cpu-time {mode} S={OutputRatio}: best {_inputBytes / seconds / 1e9:F3} GB/s of input per core "
                + $"({_inputBytes} bytes in {seconds * 1e3:F2} ms of thread CPU time)");
        }
        _cpu.Clear();
    }

    private long Run(StreamMerger merger)
    {
        double start = ThreadCpuClock.Seconds();
        long produced = Merge(merger);
        _cpu.Record(merger.Mode.ToString(), start);
        return produced;
    }

    private long Merge(StreamMerger merger)
    {
        merger.Reset();
        Array.Clear(_offsets);
        long produced = 0;
        while (true)
        {
            for (int i = 0; i < _streams.Length; i++)
            {
                if (merger.IsFinished(i) || merger.BufferedBytes(i) >= 2 * FrameBytes)
                {
                    continue;
                }
                int count = Math.Min(FrameBytes, _streams[i].Length - _offsets[i]);
                if (count == 0)
                {
                    merger.Finish(i);
                    continue;
                }
                merger.Append(i, _streams[i].AsSpan(_offsets[i], count));
                _offsets[i] += count;
            }
            var status = merger.Drain(_output, out int written);
            produced += written;
            if (status == DrainStatus.Completed)
            {
                return produced;
            }
        }
    }

    private sealed class Config : ManualConfig
    {
        public Config() => AddColumn(new InputThroughputColumn());
    }
}

using BenchmarkDotNet.Attributes;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Merge;
using Camdoop.Runtime.Hosting;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// A merge of many inputs, as at a reducer that receives from every server: K sorted streams shaped like the synthetic job's
/// records (random 4-28-letter keys, 4-byte counters, 4 MB over all K, so the cost per record compares across K),
/// combined, fed frame by frame (8,900-byte chunks, at most two buffered per input) into a 64 KiB output. Tournament
/// false is the lane scan every merger used before the head tournament; true forces the tournament
/// (<see cref="PrefixTournament"/>). Pick the input count past which the tournament is used from where they cross.
/// Run: dotnet run -c Release --project tools/Camdoop.Benchmarks -- --filter *MergeFanIn* --job short
/// The benchmark process also prints the best per-operation thread CPU time ("// cpu-time ..." lines).
/// </summary>
[MemoryDiagnoser]
public class MergeFanInBenchmark
{
    private const int FrameBytes = 8_900;
    private const int TotalBytes = 4_000_000;

    private byte[][] _streams = [];
    private int[] _offsets = [];
    private StreamMerger _merger = null!;
    private readonly byte[] _output = new byte[64 * 1024];
    private readonly BestCpuTimes _cpu = new();
    private long _inputBytes;

    [Params(8, 9, 16, 32, 64, 512)]
    public int Inputs { get; set; }

    [Params(false, true)]
    public bool Tournament { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _streams = Build(Inputs);
        _offsets = new int[Inputs];
        _inputBytes = _streams.Sum(s => (long)s.Length);
        _merger = new StreamMerger(new SyntheticJob(), Inputs, MergeMode.Combine, Tournament, 32 * 1024);
    }

    [Benchmark]
    public long Combine()
    {
        double start = ThreadCpuClock.Seconds();
        long produced = Merge();
        _cpu.Record("Combine", start);
        return produced;
    }

    [GlobalCleanup]
    public void Report()
    {
        foreach (var (_, seconds) in _cpu.Seconds)
        {
            Console.WriteLine($"// cpu-time K={Inputs} tournament={Tournament}: best {seconds * 1e3:F2} ms, "
                + $"{_inputBytes / seconds / 1e9:F3} GB/s of input per core ({_inputBytes} bytes)");
        }
        _cpu.Clear();
    }

    /// <summary>K sorted streams of random keys, the same bytes for a given K in every process.</summary>
    private static byte[][] Build(int inputs)
    {
        var random = new Random(inputs);
        var streams = new byte[inputs][];
        Span<byte> value = stackalloc byte[4];
        for (int i = 0; i < inputs; i++)
        {
            var keys = new List<byte[]>();
            for (int bytes = 0; bytes < TotalBytes / inputs;)
            {
                var key = new byte[random.Next(4, 29)];
                for (int b = 0; b < key.Length; b++)
                {
                    key[b] = (byte)('a' + random.Next(26));
                }
                keys.Add(key);
                bytes += key.Length + 6;
            }
            keys.Sort((a, b) => a.AsSpan().SequenceCompareTo(b));
            var buffer = new RecordBuffer(TotalBytes / inputs * 2);
            foreach (var key in keys)
            {
                value.Fill(0);
                value[3] = 1;
                buffer.Emit(key, value);
            }
            streams[i] = buffer.ToArray();
        }
        return streams;
    }

    private long Merge()
    {
        _merger.Reset();
        Array.Clear(_offsets);
        long produced = 0;
        while (true)
        {
            for (int i = 0; i < _streams.Length; i++)
            {
                if (_merger.IsFinished(i) || _merger.BufferedBytes(i) >= 2 * FrameBytes)
                {
                    continue;
                }
                int count = Math.Min(FrameBytes, _streams[i].Length - _offsets[i]);
                if (count == 0)
                {
                    _merger.Finish(i);
                    continue;
                }
                _merger.Append(i, _streams[i].AsSpan(_offsets[i], count));
                _offsets[i] += count;
            }
            var status = _merger.Drain(_output, out int written);
            produced += written;
            if (status == DrainStatus.Completed)
            {
                return produced;
            }
        }
    }
}

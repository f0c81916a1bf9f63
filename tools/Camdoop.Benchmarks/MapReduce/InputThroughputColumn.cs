using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>Input bytes merged per second on one core: the streams' total size over the mean time of one merge.</summary>
public sealed class InputThroughputColumn : IColumn
{
    private readonly Dictionary<double, long> _bytes = [];

    public string Id => nameof(InputThroughputColumn);

    public string ColumnName => "Input GB/s";

    public bool AlwaysShow => true;

    public ColumnCategory Category => ColumnCategory.Custom;

    public int PriorityInCategory => 0;

    public bool IsNumeric => true;

    public UnitType UnitType => UnitType.Dimensionless;

    public string Legend => "Input bytes (all seven streams) per second of mean time, in 10^9 bytes/s";

    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    public bool IsAvailable(Summary summary) => true;

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => GetValue(summary, benchmarkCase, SummaryStyle.Default);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style)
    {
        var report = summary[benchmarkCase];
        if (report?.ResultStatistics is null)
        {
            return "-";
        }
        double ratio = (double)benchmarkCase.Parameters[nameof(MergeCombineBenchmark.OutputRatio)];
        if (!_bytes.TryGetValue(ratio, out long bytes))
        {
            _bytes[ratio] = bytes = MergeStreams.TotalBytes(ratio);
        }
        double seconds = report.ResultStatistics.Mean / 1e9;
        return (bytes / seconds / 1e9).ToString("F3", CultureInfo.InvariantCulture);
    }

    public override string ToString() => ColumnName;
}

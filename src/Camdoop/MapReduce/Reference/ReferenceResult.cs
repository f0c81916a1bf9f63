using System.Buffers;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.Reference;

/// <summary>Output records of the reference MapReduce, per reduce task in key order, with the sizes behind S.</summary>
public sealed class ReferenceResult(
    IMapReduceJob job,
    IReadOnlyList<IReadOnlyList<KeyValuePair<byte[], byte[]>>> outputs,
    long inputRecords,
    long intermediateRecords,
    long intermediateLogicalBytes)
{
    public IReadOnlyList<IReadOnlyList<KeyValuePair<byte[], byte[]>>> Outputs { get; } = outputs;

    public long InputRecords { get; } = inputRecords;

    /// <summary>Records after each server's combine (what the shuffle carries without on-path aggregation).</summary>
    public long IntermediateRecords { get; } = intermediateRecords;

    /// <summary>Key plus value bytes of the intermediate records.</summary>
    public long IntermediateLogicalBytes { get; } = intermediateLogicalBytes;

    public long OutputLogicalBytes => Outputs.Sum(o => o.Sum(p => (long)p.Key.Length + p.Value.Length));

    /// <summary>The output ratio S = output size / intermediate size (the Camdoop paper, §5.2).</summary>
    public double OutputRatio => IntermediateLogicalBytes == 0 ? 0 : (double)OutputLogicalBytes / IntermediateLogicalBytes;

    /// <summary>The reduce task's output in the job's output format.</summary>
    public byte[] Format(int reduceTask)
    {
        var writer = new ArrayBufferWriter<byte>();
        foreach (var (key, value) in Outputs[reduceTask])
        {
            job.FormatOutput(key, value, writer);
        }
        return writer.WrittenSpan.ToArray();
    }
}

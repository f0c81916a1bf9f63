using System.Buffers;
using Camdoop.Records;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// A MapReduce job as a user writes it (the Camdoop paper, §2): map, combine/reduce, partition, key order and output format.
/// Implementations must be deterministic (re-executed map tasks must produce the same records, the Camdoop paper, §4.2) and
/// must not keep per-call state in fields: one instance may serve several map tasks and merges at once.
/// Keys and values are byte strings within <see cref="RecordLimits"/>.
/// <para>
/// Combine/reduce contract. When <see cref="IsAssociativeCommutative"/> is true, <see cref="TryCombine"/> folds two
/// values of the same key into one; Camdoop may apply it in any grouping and order, on the map side and at every
/// on-path vertex, and then calls <see cref="Reduce"/> exactly once per key with a single value, the fold of all
/// values (so Reduce is the "finalize" step: identity for counts). When it is false, nothing is folded: vertices
/// only merge, and <see cref="Reduce"/> sees every value of the key, in ascending byte order.
/// </para>
/// </summary>
public interface IMapReduceJob
{
    /// <summary>Short name used in logs and run-file headers.</summary>
    string Name { get; }

    InputFormat InputFormat { get; }

    /// <summary>Maps one input record (a text line without its terminator, or one fixed-size record).</summary>
    void Map(ReadOnlySpan<byte> record, IMapEmitter output);

    /// <summary>True when <see cref="TryCombine"/> is associative and commutative, so it is applied on path.</summary>
    bool IsAssociativeCommutative { get; }

    /// <summary>
    /// Folds <paramref name="left"/> and <paramref name="right"/> (values of <paramref name="key"/>) into
    /// <paramref name="destination"/>, which never overlaps them. Returns false, writing nothing that matters, when
    /// <paramref name="destination"/> is too small; the caller retries with a larger one.
    /// </summary>
    bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        throw new NotSupportedException($"job '{Name}' has no combiner (it is not associative and commutative)");

    /// <summary>
    /// True when, for an associative job, <see cref="Reduce"/> of a key and its folded value always emits exactly that
    /// one record, unchanged (counts, sums, top-k lists). The reducer then writes the combined stream as it is,
    /// without calling <see cref="Reduce"/> record by record. Default false; ignored when the job is not associative.
    /// </summary>
    bool ReduceIsIdentity => false;

    /// <summary>Produces the output records of one key (see the contract above).</summary>
    void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output);

    /// <summary>Reduce task (0 .. reduceTasks-1) of a key. Default: hash of the key bytes.</summary>
    int Partition(ReadOnlySpan<byte> key, int reduceTasks) => HashPartitioner.Partition(key, reduceTasks);

    /// <summary>Key order; null (the default and fast path) is byte-wise lexicographic order.</summary>
    IKeyComparer? KeyComparer => null;

    /// <summary>Writes one output record in the job's output format. Default: key, TAB, value, newline, raw bytes.</summary>
    void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output)
    {
        var span = output.GetSpan(key.Length + value.Length + 2);
        key.CopyTo(span);
        span[key.Length] = (byte)'\t';
        value.CopyTo(span[(key.Length + 1)..]);
        span[key.Length + value.Length + 1] = (byte)'\n';
        output.Advance(key.Length + value.Length + 2);
    }
}

namespace Camdoop.MapReduce.Merge;

/// <summary>What a <see cref="StreamMerger"/> does with records of equal keys.</summary>
public enum MergeMode
{
    /// <summary>Keep every record (no-agg baseline, or a job that is not associative): output sorted by (key, value).</summary>
    Merge,

    /// <summary>Fold all records of a key into one with the job's combiner (on-path vertices of associative jobs).</summary>
    Combine,

    /// <summary>
    /// The root: group each key (folded with the combiner for associative jobs, all values otherwise) and emit what
    /// the job's reduce function produces.
    /// </summary>
    Reduce,
}

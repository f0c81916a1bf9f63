namespace Camdoop.MapReduce.Merge;

/// <summary>Why <see cref="StreamMerger.Drain"/> returned.</summary>
public enum DrainStatus
{
    /// <summary>The output span is full; call again with more room.</summary>
    OutputFull,

    /// <summary>An unfinished input has no complete record (see <see cref="StreamMerger.NeedsData"/>): append or finish it.</summary>
    NeedsInput,

    /// <summary>Every input is finished and everything has been emitted.</summary>
    Completed,
}

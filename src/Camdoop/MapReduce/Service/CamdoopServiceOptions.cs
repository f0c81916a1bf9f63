using Camdoop.MapReduce.Shuffle;

namespace Camdoop.MapReduce.Service;

/// <summary>Tunables of one server's Camdoop service. Times in nanoseconds, sizes in bytes.</summary>
public sealed record CamdoopServiceOptions
{
    /// <summary>The shuffle transport's windows, timeouts and runtime queue.</summary>
    public ShuffleOptions Shuffle { get; init; } = new();

    /// <summary>
    /// Packet-buffer budget per server, split evenly over the inbound streams of all running jobs (the Camdoop paper,
    /// §4.1; its testbed used 440 MB). The simulator's default is smaller so that 512 servers fit one machine.
    /// </summary>
    public long MemoryBudgetBytes { get; init; } = 8L * 1024 * 1024;

    /// <summary>Bytes of a local run handed to a vertex's merger at a time.</summary>
    public int LocalBlockBytes { get; init; } = 16 * 1024;

    /// <summary>
    /// Initial per-input buffer of a vertex's merger (grows on demand). 0 sizes it from the budget per inbound stream
    /// (256 bytes to 16 KiB): small when R = N puts thousands of vertices on a server, larger (fewer regrowths) when few.
    /// </summary>
    public int MergerInitialInputBytes { get; init; }

    /// <summary>
    /// Bytes each merging vertex's output keeps before its acknowledged offset, so that when its parent fails it can
    /// start again from the parent's last key without merging anything again (the Camdoop paper, §4.2). -1 (the
    /// default) sizes it to cover what a parent holds unforwarded: its receive window, its own output window and two
    /// segments. 0 keeps nothing: every restart regenerates.
    /// </summary>
    public long ResumeRetentionBytes { get; init; } = -1;

    /// <summary>
    /// Bytes of shuffle frames held for jobs about to start here (<see cref="CamdoopService.Expect"/>): a server that
    /// starts the shuffle a little sooner sends its first windows before its parent has the job. Past this they are
    /// dropped, and the senders' retransmissions bring them again.
    /// </summary>
    public long MaxEarlyBytes { get; init; } = 16L * 1024 * 1024;

    public void Validate()
    {
        ArgumentNullException.ThrowIfNull(Shuffle);
        Shuffle.Validate();
        ArgumentOutOfRangeException.ThrowIfLessThan(MemoryBudgetBytes, 0);
        ArgumentOutOfRangeException.ThrowIfLessThan(LocalBlockBytes, 64);
        ArgumentOutOfRangeException.ThrowIfNegative(MergerInitialInputBytes);
        ArgumentOutOfRangeException.ThrowIfNegative(MaxEarlyBytes);
    }
}

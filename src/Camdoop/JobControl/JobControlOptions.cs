using Camdoop.MapReduce.Jobs;
using Camdoop.Runtime.Node;

namespace Camdoop.JobControl;

/// <summary>Tunables of job control. Times in nanoseconds.</summary>
public sealed record JobControlOptions
{
    /// <summary>The longest an unacknowledged control message waits before it is sent again (the wait adapts to the round trip, doubling on each try).</summary>
    public long RetryInterval { get; init; } = 300 * NodeOptions.Millisecond;

    /// <summary>The shortest wait before a control message is sent again, and the first before a round trip is measured.</summary>
    public long MinRetryInterval { get; init; } = 10 * NodeOptions.Millisecond;

    /// <summary>Sends of one control message before its destination is given up.</summary>
    public int MaxAttempts { get; init; } = 60;

    /// <summary>How often a shuffling server reports its progress to the coordinator.</summary>
    public long ProgressInterval { get; init; } = 250 * NodeOptions.Millisecond;

    /// <summary>
    /// The synchronous start of the shuffle (the Camdoop paper, §4): the coordinator names an instant this long after
    /// it decides, on the clock the servers share (<see cref="INodeContext.ClusterTime"/>), and every server starts
    /// then, so that the first data of the servers the word reaches first does not slow the word on its way to the
    /// others. Long enough for the word to reach every server; 0: each starts when the word reaches it.
    /// </summary>
    public long SynchronousStart { get; init; }

    /// <summary>
    /// The coordinator tells the servers which reduce tasks are done at most this often (batched), so that one whose
    /// root is lost later is not started over. Shorter than failure detection, so that a task done before a failure
    /// is known done when the failure is noticed.
    /// </summary>
    public long DoneNoticeInterval { get; init; } = 10 * NodeOptions.Millisecond;

    /// <summary>The coordinator fails a job when no server has reported anything for this long.</summary>
    public long StallTimeout { get; init; } = 180_000 * NodeOptions.Millisecond;

    /// <summary>How long a front-end's query waits for one server's answer before it asks the next.</summary>
    public long QueryTimeout { get; init; } = 2_000 * NodeOptions.Millisecond;

    /// <summary>Ended jobs whose state a server keeps for status queries (as coordinator or as a copy); the oldest go first.</summary>
    public int MaxEndedJobs { get; init; } = 1000;

    /// <summary>Sort buffer of each map task.</summary>
    public long MapSortBufferBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// Which jobs this server runs, and checks as a coordinator: built-ins only unless the node's config allows a
    /// job assembly directory.
    /// </summary>
    public JobCatalog Jobs { get; init; } = JobCatalog.BuiltInOnly;

    /// <summary>Throws <see cref="ArgumentException"/> naming the first bad value.</summary>
    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(RetryInterval);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(MinRetryInterval);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(MinRetryInterval, RetryInterval);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(MaxAttempts);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(ProgressInterval);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(StallTimeout);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(QueryTimeout);
        ArgumentOutOfRangeException.ThrowIfNegative(MaxEndedJobs);
        ArgumentOutOfRangeException.ThrowIfNegative(SynchronousStart);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(DoneNoticeInterval);
        ArgumentNullException.ThrowIfNull(Jobs);
    }
}

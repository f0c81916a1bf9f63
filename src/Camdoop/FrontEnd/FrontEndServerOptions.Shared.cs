namespace Camdoop.FrontEnd;

// The front-end's limits shared by all its connections (per-connection ones are with the record's declaration):
// the sessions take them through a FrontEndMemoryBudget and a StandingQueryLimit built from these.
public sealed partial record FrontEndServerOptions
{
    /// <summary>
    /// Bytes the front-end holds for all its clients at once (<see cref="FrontEndMemoryBudget"/>): uploads' chunk
    /// buffers and chunks being read for downloads. At least <see cref="MaxBytesInFlight"/>, so that any chunk one
    /// connection may upload fits.
    /// </summary>
    public long MaxBytesHeld { get; init; } = 1L << 30;

    /// <summary>How long a request waits for room in <see cref="MaxBytesHeld"/> before it is refused.</summary>
    public TimeSpan MemoryWait { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Monitoring queries the front-end runs for its clients at once (<see cref="StandingQueryLimit"/>); half its
    /// connections by default, so that standing queries never hold them all.
    /// </summary>
    public int MaxQueries { get; init; } = 32;

    /// <summary>Monitoring queries one client address may have running on the front-end at once.</summary>
    public int MaxQueriesPerClient { get; init; } = 4;
}

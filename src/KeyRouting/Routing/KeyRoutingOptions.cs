namespace Camdoop.KeyRouting;

/// <summary>Tunables of the key-based routing service. Times are in nanoseconds.</summary>
public sealed record KeyRoutingOptions
{
    public const long Millisecond = 1_000_000;

    /// <summary>
    /// How often every server sends its link-state database to its neighbours so that lost advertisements heal.
    /// Each interval is jittered by ±25%, deterministically per server. Zero turns the refresh off.
    /// </summary>
    public long RefreshInterval { get; init; } = 1000 * Millisecond;

    /// <summary>
    /// Delay between the first link-state change and the route recomputation that ownership listeners hear about;
    /// changes arriving meanwhile share one recomputation. Lookups always see the newest state.
    /// </summary>
    public long RecomputeDelay { get; init; }
}

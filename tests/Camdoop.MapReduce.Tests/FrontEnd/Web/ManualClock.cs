namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>A clock that moves only when told: expiry is tested without waiting for it.</summary>
internal sealed class ManualClock : TimeProvider
{
    private DateTimeOffset _now = new(2030, 1, 1, 0, 0, 0, TimeSpan.Zero);

    public override DateTimeOffset GetUtcNow() => _now;

    public void Advance(TimeSpan by) => _now += by;
}

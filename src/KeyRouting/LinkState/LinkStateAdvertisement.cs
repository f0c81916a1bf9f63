namespace Camdoop.KeyRouting;

/// <summary>
/// What one server says about its own six links: bit p set when the link on port p is up. Versions order by
/// (boot epoch, sequence), so the advertisements of a rebooted server win over those of its previous life.
/// </summary>
public readonly record struct LinkStateAdvertisement(int Origin, ulong Epoch, uint Sequence, byte Links)
{
    public const byte AllUp = 0x3F;

    /// <summary>The version every server assumes for every other at start: a healthy cube needs no flooding.</summary>
    public static LinkStateAdvertisement Assumed(int origin) => new(origin, 0, 0, AllUp);

    public bool IsNewerThan(in LinkStateAdvertisement other) =>
        Epoch != other.Epoch ? Epoch > other.Epoch : Sequence > other.Sequence;

    public bool IsAssumed => Epoch == 0 && Sequence == 0 && Links == AllUp;
}

namespace Camdoop.Simulator.Energy;

/// <summary>
/// The minimum wake (T_w) and sleep (T_s) times of 802.3az Energy Efficient Ethernet, as tabulated in "E-EON:
/// Energy-Efficient and Optimized Networks for Hadoop" (Table 2.1) for 100BASE-TX, 1000BASE-T and 10GBASE-T. A link
/// of another rate takes the row of the fastest standard rate not above its own (the slowest row below 100 Mbit/s):
/// the PHY that runs it is of that generation, so a 2.5 or 5 Gbit/s link wakes like a gigabit one.
/// </summary>
public static class EeeTimings
{
    /// <summary>T_w in nanoseconds at <paramref name="bitsPerSecond"/>.</summary>
    public static long WakeTime(long bitsPerSecond) => bitsPerSecond switch
    {
        >= 10_000_000_000 => 4_480,
        >= 1_000_000_000 => 16_500,
        _ => 30_500,
    };

    /// <summary>T_s in nanoseconds at <paramref name="bitsPerSecond"/>.</summary>
    public static long SleepTime(long bitsPerSecond) => bitsPerSecond switch
    {
        >= 10_000_000_000 => 2_880,
        >= 1_000_000_000 => 182_000,
        _ => 200_000,
    };
}

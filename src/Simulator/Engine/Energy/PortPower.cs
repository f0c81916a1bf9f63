namespace Camdoop.Simulator.Energy;

/// <summary>
/// Default power of one port (one link direction's transmitter and its share of the PHY) at full activity, from
/// "E-EON: Energy-Efficient and Optimized Networks for Hadoop" (Table 4.1): 0.5 W for a 1000BASE-T port, 2.5 W for a
/// 10GBASE-T one (a conservative figure for its 28 nm generation, 2 to 4 W). Rates below 10 Gbit/s take the gigabit
/// figure and rates from 10 Gbit/s up the 10 Gbit/s one, as for <see cref="EeeTimings"/>. In low-power idle a port
/// draws about a tenth of it (<see cref="EnergyModel.IdleFraction"/>).
/// </summary>
public static class PortPower
{
    public static double DefaultWatts(long bitsPerSecond) => bitsPerSecond >= 10_000_000_000 ? 2.5 : 0.5;
}

namespace Camdoop.Simulator.Energy;

/// <summary>How a link direction's transmitter spends power between frames.</summary>
public enum EnergyModelKind
{
    /// <summary>Legacy Ethernet: full power all the time, busy or not.</summary>
    Legacy,

    /// <summary>IEEE 802.3az Energy Efficient Ethernet: low-power idle whenever there is nothing to send, with wake and sleep transitions.</summary>
    Eee,

    /// <summary>Low-power idle whenever there is nothing to send, with instant transitions that cost nothing: the lower bound.</summary>
    Ideal,
}

using System.Text.Json.Serialization;

namespace Camdoop.Simulator.Energy;

/// <summary>Joules by kind of link direction: torus cables', servers' NICs towards a switch, and switches' ports.</summary>
public sealed record EnergyByLinkKind(
    [property: JsonPropertyName("torusLinks")] double TorusLinks,
    [property: JsonPropertyName("serverNics")] double ServerNics,
    [property: JsonPropertyName("switchPorts")] double SwitchPorts);

/// <summary>
/// The energy a simulated network's ports spent over <see cref="Seconds"/> (from time 0, or from a start:
/// <see cref="Since"/>), under <see cref="Model"/>: every link direction with a cable counts as one port, busy or not.
/// </summary>
public sealed record NetworkEnergy(
    [property: JsonPropertyName("model")] string Model,
    [property: JsonPropertyName("joules")] double Joules,
    [property: JsonPropertyName("byKind")] EnergyByLinkKind ByKind,
    [property: JsonPropertyName("seconds")] double Seconds,
    [property: JsonPropertyName("ports")] int Ports,
    [property: JsonPropertyName("wattsPerPort")] double WattsPerPort,
    [property: JsonPropertyName("lowPowerShare")] double LowPowerShare,
    [property: JsonPropertyName("wakes")] long Wakes)
{
    /// <summary>What the same ports would have drawn at full power all along (legacy Ethernet).</summary>
    [JsonPropertyName("legacyJoules")]
    public double LegacyJoules => WattsPerPort * Ports * Seconds;

    /// <summary>What was spent after <paramref name="start"/>, a measurement of the same network at an earlier time.</summary>
    public NetworkEnergy Since(NetworkEnergy start)
    {
        ArgumentNullException.ThrowIfNull(start);
        double seconds = Seconds - start.Seconds;
        double lowPower = (LowPowerShare * Seconds) - (start.LowPowerShare * start.Seconds);
        return this with
        {
            Joules = Joules - start.Joules,
            ByKind = new EnergyByLinkKind(ByKind.TorusLinks - start.ByKind.TorusLinks, ByKind.ServerNics - start.ByKind.ServerNics,
                ByKind.SwitchPorts - start.ByKind.SwitchPorts),
            Seconds = seconds,
            LowPowerShare = seconds > 0 ? lowPower / seconds : 0,
            Wakes = Wakes - start.Wakes,
        };
    }
}

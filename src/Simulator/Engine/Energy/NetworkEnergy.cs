using System.Text.Json.Serialization;

namespace Camdoop.Simulator.Energy;

/// <summary>Joules by kind of link direction: torus cables', servers' NICs towards a switch, and switches' ports.</summary>
public sealed record EnergyByLinkKind(
    [property: JsonPropertyName("torusLinks")] double TorusLinks,
    [property: JsonPropertyName("serverNics")] double ServerNics,
    [property: JsonPropertyName("switchPorts")] double SwitchPorts);

/// <summary>
/// The energy a simulated network's ports spent from time 0 to <see cref="Seconds"/>, under <see cref="Model"/>:
/// every link direction with a cable counts as one port, busy or not.
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
}

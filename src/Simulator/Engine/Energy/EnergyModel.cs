using System.Globalization;
using System.Text.RegularExpressions;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Energy;

/// <summary>
/// The energy model every link direction and switch port of a simulated network accounts under, after "E-EON:
/// Energy-Efficient and Optimized Networks for Hadoop": legacy Ethernet, 802.3az EEE (optionally with packet
/// coalescing), or the ideal lower bound. Only <see cref="EnergyModelKind.Eee"/> changes when frames leave.
/// </summary>
public sealed partial record EnergyModel
{
    public static readonly EnergyModel Legacy = new() { Kind = EnergyModelKind.Legacy };

    public static readonly EnergyModel Eee = new() { Kind = EnergyModelKind.Eee };

    public static readonly EnergyModel Ideal = new() { Kind = EnergyModelKind.Ideal };

    /// <summary>What the text of <see cref="Parse"/> looks like, for help and error messages.</summary>
    public const string Syntax = "legacy | eee | ideal | eee:HOLDTRIGGER (coalescing, e.g. eee:12us10, eee:120us100, eee:1ms1000)";

    public EnergyModelKind Kind { get; init; }

    /// <summary>
    /// Packet coalescing (EEE only): a frame that finds its link asleep waits up to this long, so that the frames
    /// behind it leave in one burst; 0 is no coalescing (the link wakes at once).
    /// </summary>
    public long HoldTime { get; init; }

    /// <summary>With coalescing, the link wakes as soon as this many frames wait (or its transmit queue is full).</summary>
    public int PacketTrigger { get; init; }

    /// <summary>Power of a port at full activity, in watts; null takes <see cref="PortPower.DefaultWatts"/> at the link rate.</summary>
    public double? FullPowerWatts { get; init; }

    /// <summary>Share of full power a port draws in low-power idle (refresh signals included): about a tenth.</summary>
    public double IdleFraction { get; init; } = 0.1;

    /// <summary>T_w in nanoseconds; null takes <see cref="EeeTimings.WakeTime"/> at the link rate.</summary>
    public long? WakeTime { get; init; }

    /// <summary>T_s in nanoseconds; null takes <see cref="EeeTimings.SleepTime"/> at the link rate.</summary>
    public long? SleepTime { get; init; }

    public bool Coalesces => Kind == EnergyModelKind.Eee && HoldTime > 0;

    public double WattsAt(long bitsPerSecond) => FullPowerWatts ?? PortPower.DefaultWatts(bitsPerSecond);

    public long WakeTimeAt(long bitsPerSecond) => WakeTime ?? EeeTimings.WakeTime(bitsPerSecond);

    public long SleepTimeAt(long bitsPerSecond) => SleepTime ?? EeeTimings.SleepTime(bitsPerSecond);

    /// <summary>The model's name as <see cref="Parse"/> reads it: legacy, eee, ideal or eee:120us100.</summary>
    public string Name => Kind switch
    {
        EnergyModelKind.Legacy => "legacy",
        EnergyModelKind.Ideal => "ideal",
        _ when HoldTime > 0 => string.Create(CultureInfo.InvariantCulture, $"eee:{HoldName(HoldTime)}{PacketTrigger}"),
        _ => "eee",
    };

    /// <summary>Reads <see cref="Syntax"/>; throws <see cref="FormatException"/> with what is wrong.</summary>
    public static EnergyModel Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        switch (text.Trim().ToLowerInvariant())
        {
            case "legacy":
                return Legacy;
            case "eee":
                return Eee;
            case "ideal":
                return Ideal;
        }
        var m = CoalescingPattern().Match(text.Trim().ToLowerInvariant());
        if (!m.Success)
        {
            throw new FormatException($"'{text}' is not an energy model: give {Syntax}");
        }
        if (!SimTime.TryParseDuration(m.Groups[1].Value, out long hold) || hold <= 0)
        {
            throw new FormatException($"'{text}': the hold time must be positive");
        }
        if (!int.TryParse(m.Groups[2].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int trigger) || trigger < 1)
        {
            throw new FormatException($"'{text}': the packet trigger must be a whole number from 1");
        }
        return new EnergyModel { Kind = EnergyModelKind.Eee, HoldTime = hold, PacketTrigger = trigger };
    }

    internal void Validate()
    {
        if (FullPowerWatts is { } w && (w < 0 || !double.IsFinite(w)))
        {
            throw new ArgumentOutOfRangeException(nameof(FullPowerWatts), w, "port power must be a finite number of watts, 0 or more");
        }
        if (IdleFraction is < 0 or > 1 || double.IsNaN(IdleFraction))
        {
            throw new ArgumentOutOfRangeException(nameof(IdleFraction), IdleFraction, "the idle share of full power is between 0 and 1");
        }
        ArgumentOutOfRangeException.ThrowIfNegative(HoldTime);
        ArgumentOutOfRangeException.ThrowIfNegative(WakeTime ?? 0, nameof(WakeTime));
        ArgumentOutOfRangeException.ThrowIfNegative(SleepTime ?? 0, nameof(SleepTime));
        if (HoldTime > 0 && PacketTrigger < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(PacketTrigger), PacketTrigger, "coalescing needs a packet trigger of 1 or more");
        }
    }

    private static string HoldName(long ns) =>
        ns % SimTime.Millisecond == 0 ? string.Create(CultureInfo.InvariantCulture, $"{ns / SimTime.Millisecond}ms")
        : ns % SimTime.Microsecond == 0 ? string.Create(CultureInfo.InvariantCulture, $"{ns / SimTime.Microsecond}us")
        : string.Create(CultureInfo.InvariantCulture, $"{ns}ns");

    // eee: a hold time with its unit, then the packet trigger: eee:120us100.
    [GeneratedRegex(@"^eee:([0-9]+(?:\.[0-9]+)?(?:ns|us|ms|s))([0-9]+)$", RegexOptions.CultureInvariant)]
    private static partial Regex CoalescingPattern();
}

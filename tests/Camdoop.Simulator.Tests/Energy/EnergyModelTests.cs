using Camdoop.Simulator.Energy;

namespace Camdoop.Simulator.Tests.Energy;

public class EnergyModelTests
{
    [Theory]
    [InlineData("legacy", EnergyModelKind.Legacy, 0, 0)]
    [InlineData("EEE", EnergyModelKind.Eee, 0, 0)]
    [InlineData("ideal", EnergyModelKind.Ideal, 0, 0)]
    [InlineData("eee:12us10", EnergyModelKind.Eee, 12_000, 10)]
    [InlineData("eee:120us100", EnergyModelKind.Eee, 120_000, 100)]
    [InlineData("eee:1ms1000", EnergyModelKind.Eee, 1_000_000, 1000)]
    [InlineData("eee:1.5us2", EnergyModelKind.Eee, 1_500, 2)]
    public void ParsesTheModelsAndCoalescingSettings(string text, EnergyModelKind kind, long hold, int trigger)
    {
        var model = EnergyModel.Parse(text);
        Assert.Equal(kind, model.Kind);
        Assert.Equal(hold, model.HoldTime);
        Assert.Equal(trigger, model.PacketTrigger);
        Assert.Equal(model, EnergyModel.Parse(model.Name));
    }

    [Theory]
    [InlineData("")]
    [InlineData("green")]
    [InlineData("eee:")]
    [InlineData("eee:120us")]
    [InlineData("eee:120100")]
    [InlineData("eee:0us10")]
    [InlineData("eee:12us0")]
    [InlineData("ideal:12us10")]
    [InlineData("eee:12xs10")]
    public void RejectsAnythingElse(string text) => Assert.Throws<FormatException>(() => EnergyModel.Parse(text));

    [Theory]
    [InlineData(1_000_000_000, 16_500, 182_000, 0.5)]
    [InlineData(10_000_000_000, 4_480, 2_880, 2.5)]
    [InlineData(100_000_000, 30_500, 200_000, 0.5)]
    [InlineData(2_500_000_000, 16_500, 182_000, 0.5)]
    [InlineData(40_000_000_000, 4_480, 2_880, 2.5)]
    public void TimingsAndPowerFollowTheLinkRate(long rate, long wake, long sleep, double watts)
    {
        Assert.Equal(wake, EnergyModel.Eee.WakeTimeAt(rate));
        Assert.Equal(sleep, EnergyModel.Eee.SleepTimeAt(rate));
        Assert.Equal(watts, EnergyModel.Eee.WattsAt(rate));
        Assert.Equal(3.0, (EnergyModel.Eee with { FullPowerWatts = 3 }).WattsAt(rate));
    }
}

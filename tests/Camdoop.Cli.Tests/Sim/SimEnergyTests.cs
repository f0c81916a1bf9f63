using System.Text.Json;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>`sim run --energy`: the model's energy in the JSON, and a bad model as one usage line (exit 2).</summary>
public sealed class SimEnergyTests
{
    [Theory]
    [InlineData("green")]
    [InlineData("eee:120us")]
    [InlineData("eee:0us10")]
    [InlineData("ideal:12us10")]
    public void ABadModelIsOneUsageLine(string model)
    {
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--energy", model);
        Assert.True(result.ExitCode == 2, result.ToString());
        string line = Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        Assert.StartsWith("camdoop sim run: --energy ", line, StringComparison.Ordinal);
        Assert.Contains(model, line, StringComparison.Ordinal);
        Assert.Empty(result.Stdout);
    }

    [Fact]
    public void TheJsonCarriesTheModelsEnergySplitByLinkKind()
    {
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--job", "wordcount", "--input-per-server", "20KB", "--energy", "eee:12us10",
            "--verify", "--json", "--threads", "1");
        Assert.True(result.ExitCode == 0, result.ToString());
        using var json = JsonDocument.Parse(result.Stdout);
        var energy = json.RootElement.GetProperty("energy");
        Assert.Equal("eee:12us10", energy.GetProperty("model").GetString());
        double joules = energy.GetProperty("joules").GetDouble();
        var byKind = energy.GetProperty("byKind");
        Assert.Equal(joules, byKind.GetProperty("torusLinks").GetDouble(), 12);
        Assert.Equal(0, byKind.GetProperty("switchPorts").GetDouble());
        // 48 ports (2x2x2, six each) at 0.5 W: between a tenth of that and all of it over the job.
        double seconds = json.RootElement.GetProperty("shuffleReduceSeconds").GetDouble();
        Assert.InRange(joules, 0.1 * 0.5 * 48 * seconds, 0.5 * 48 * seconds);
    }
}

using System.Diagnostics;
using System.Globalization;
using System.Text.Json;

namespace Camdoop.Cli.Tests.Support;

/// <summary>One value dotnet-counters collected: its instrument, unit text, tags, kind ("Metric" or "Rate") and value.</summary>
internal sealed record CollectedCounter(string Provider, string Instrument, string Unit, IReadOnlyDictionary<string, string> Tags, string Kind, double Value);

/// <summary>
/// dotnet-counters, the .NET diagnostics tool, installed by the test itself (`dotnet tool install --tool-path`, a
/// pinned version, into the test's output directory, once) and run as an operator would: `collect` against a
/// process id for a few seconds, its JSON read back.
/// </summary>
internal static class DotnetCounters
{
    public const string Version = "10.0.750501";

    private static readonly Lazy<string> Tool = new(Install);

    /// <summary>
    /// What dotnet-counters reads of <paramref name="providers"/> in process <paramref name="pid"/> over
    /// <paramref name="seconds"/> seconds, one value a second per series.
    /// </summary>
    public static IReadOnlyList<CollectedCounter> Collect(int pid, string providers, int seconds)
    {
        string output = Path.Combine(Path.GetTempPath(), $"camdoop-counters-{Environment.ProcessId}-{Guid.NewGuid():N}.json");
        try
        {
            Run(Tool.Value, TimeSpan.FromSeconds(seconds + 60), "collect", "-p", pid.ToString(CultureInfo.InvariantCulture), "--counters", providers,
                "--format", "json", "-o", output, "--refresh-interval", "1", "--duration", TimeSpan.FromSeconds(seconds).ToString("dd\\:hh\\:mm\\:ss", CultureInfo.InvariantCulture));
            using var json = JsonDocument.Parse(File.ReadAllText(output));
            var counters = new List<CollectedCounter>();
            foreach (var e in json.RootElement.GetProperty("Events").EnumerateArray())
            {
                // "camdoop_link_sent_bytes (By / 1 sec)": the instrument, then its unit in parentheses.
                string name = e.GetProperty("name").GetString()!;
                int paren = name.IndexOf(" (", StringComparison.Ordinal);
                var tags = e.GetProperty("tags").GetString()!.Split(',', StringSplitOptions.RemoveEmptyEntries)
                    .Select(t => t.Split('=', 2)).ToDictionary(t => t[0], t => t.Length > 1 ? t[1] : "", StringComparer.Ordinal);
                counters.Add(new CollectedCounter(e.GetProperty("provider").GetString()!, paren < 0 ? name : name[..paren], paren < 0 ? "" : name[(paren + 2)..^1],
                    tags, e.GetProperty("counterType").GetString()!, e.GetProperty("value").GetDouble()));
            }
            return counters;
        }
        finally
        {
            File.Delete(output);
        }
    }

    private static string Install()
    {
        string directory = Path.Combine(AppContext.BaseDirectory, "dotnet-tools", "dotnet-counters-" + Version);
        string tool = Path.Combine(directory, "dotnet-counters");
        if (!File.Exists(tool))
        {
            string dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host : "dotnet";
            Run(dotnet, TimeSpan.FromMinutes(5), "tool", "install", "dotnet-counters", "--version", Version, "--tool-path", directory);
        }
        return tool;
    }

    private static void Run(string file, TimeSpan timeout, params string[] args)
    {
        var psi = new ProcessStartInfo(file) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var process = Process.Start(psi) ?? throw new InvalidOperationException($"cannot start {file}");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(timeout))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{Path.GetFileName(file)} {string.Join(' ', args)} did not finish within {timeout}");
        }
        Assert.True(process.ExitCode == 0, $"{Path.GetFileName(file)} {string.Join(' ', args)}: exit {process.ExitCode}\n{stdout.Result}\n{stderr.Result}");
    }
}

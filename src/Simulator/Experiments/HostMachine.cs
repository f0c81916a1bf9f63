using System.Globalization;
using System.Runtime.InteropServices;
using System.Text.Json.Serialization;

namespace Camdoop.Experiments;

/// <summary>
/// The machine a simulation ran on, reported beside its wall-clock and CPU times: simulated results are the same
/// everywhere, but the times are not (two 2-core VMs of different processor models ran the same 8x8x8 R=1 job 25-30 %
/// apart), so a report that names its machine can be compared.
/// </summary>
public sealed record HostMachine(
    [property: JsonPropertyName("processor")] string Processor,
    [property: JsonPropertyName("logicalCores")] int LogicalCores,
    [property: JsonPropertyName("runtime")] string Runtime,
    [property: JsonPropertyName("os")] string OperatingSystem)
{
    private const string CpuInfoPath = "/proc/cpuinfo";

    private static readonly Lazy<HostMachine> CurrentMachine = new(Describe);

    /// <summary>This process's machine, read once.</summary>
    public static HostMachine Current => CurrentMachine.Value;

    /// <summary>One line: processor, logical cores, .NET version, operating system.</summary>
    public override string ToString() => $"{Processor}, {LogicalCores} logical cores, .NET {Runtime}, {OperatingSystem}";

    /// <summary>
    /// The first processor of a Linux <c>/proc/cpuinfo</c>: its model name, with the family, model number and clock
    /// when given (VMs often report a generic name such as "Intel(R) Xeon(R) Processor"); null when there is none.
    /// </summary>
    public static string? ProcessorFromCpuInfo(string cpuInfo)
    {
        ArgumentNullException.ThrowIfNull(cpuInfo);
        string? name = null, family = null, model = null, megahertz = null;
        foreach (var line in cpuInfo.Split('\n'))
        {
            if (line.Trim().Length == 0)
            {
                if (name is not null)
                {
                    break; // the end of the first processor's block
                }
                continue;
            }
            int colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon < 0)
            {
                continue;
            }
            string key = line[..colon].Trim();
            string value = line[(colon + 1)..].Trim();
            switch (key)
            {
                case "model name":
                    name ??= value;
                    break;
                case "cpu family":
                    family ??= value;
                    break;
                case "model":
                    model ??= value;
                    break;
                case "cpu MHz":
                    megahertz ??= value;
                    break;
            }
        }
        if (string.IsNullOrEmpty(name))
        {
            return null;
        }
        var details = new List<string>();
        if (family is not null && model is not null)
        {
            details.Add($"family {family}, model {model}");
        }
        if (double.TryParse(megahertz, NumberStyles.Float, CultureInfo.InvariantCulture, out double mhz) && mhz > 0)
        {
            details.Add(string.Create(CultureInfo.InvariantCulture, $"{mhz:0} MHz"));
        }
        return details.Count == 0 ? name : $"{name} ({string.Join(", ", details)})";
    }

    private static HostMachine Describe()
    {
        string? processor = null;
        try
        {
            if (File.Exists(CpuInfoPath))
            {
                processor = ProcessorFromCpuInfo(File.ReadAllText(CpuInfoPath));
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Unreadable: the architecture stands in for the processor.
        }
        return new HostMachine(
            processor ?? RuntimeInformation.ProcessArchitecture.ToString(),
            Environment.ProcessorCount,
            Environment.Version.ToString(),
            RuntimeInformation.OSDescription);
    }
}

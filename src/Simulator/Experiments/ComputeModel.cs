using System.Text.Json;
using System.Text.Json.Serialization;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>Where the rates of a simulated server's work come from (<c>--compute</c>).</summary>
public enum ComputeMode
{
    /// <summary>Work costs no virtual time (the Camdoop paper's simulator).</summary>
    Off,

    /// <summary>Rates measured on this machine by <see cref="ComputeCalibration"/>, read from a file.</summary>
    Calibrated,

    /// <summary>The Camdoop paper's testbed rates (<see cref="ComputeModel.Paper"/>).</summary>
    Paper,
}

/// <summary>How a simulation prices the work servers do: a mode and its rates.</summary>
public sealed record ComputeModel(ComputeMode Mode, ComputeRates Rates)
{
    /// <summary>The Camdoop paper's reduce code path (§5.2, §5.3): about 3.15 Gbit/s of incoming data at S = 1.</summary>
    public const double PaperReduceBitsPerSecond = 3.15e9;

    /// <summary>Cores of the paper's servers (a quad-core Xeon, §5).</summary>
    public const int PaperCores = 4;

    /// <summary>
    /// The paper's testbed. It gives only the reduce path's rate; merge and map rates are derived from it: a vertex's
    /// merge and combine cost about what the reducer's merge does per byte, and the vertices of the six trees run in
    /// parallel (§4.1) on the four cores, so a server merges at 4 x 3.15 Gbit/s; a map task sorts about as fast as the
    /// reduce path, one per core.
    /// </summary>
    public static ComputeModel Paper { get; } = new(ComputeMode.Paper, new ComputeRates
    {
        MapBitsPerSecond = PaperReduceBitsPerSecond,
        MapCores = PaperCores,
        MergeBitsPerSecond = PaperReduceBitsPerSecond * PaperCores,
        ReduceBitsPerSecond = PaperReduceBitsPerSecond,
    });

    /// <summary>Where <c>camdoop calibrate</c> writes and <c>--compute calibrated</c> reads by default.</summary>
    public static string DefaultRatesPath =>
        Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".camdoop", "compute-rates.json");

    /// <summary>The model of a <c>--compute</c> value: null for off; calibrated rates from <paramref name="ratesPath"/>.</summary>
    public static ComputeModel? For(ComputeMode mode, string? ratesPath = null) => mode switch
    {
        ComputeMode.Off => null,
        ComputeMode.Paper => Paper,
        _ => new ComputeModel(ComputeMode.Calibrated, ComputeRatesFile.Read(ratesPath ?? DefaultRatesPath).ToRates()),
    };

    public static string Name(ComputeMode mode) => mode.ToString().ToLowerInvariant();

    /// <summary>Parses a <c>--compute</c> value; false for anything but off, calibrated or paper.</summary>
    public static bool TryParse(string text, out ComputeMode mode)
    {
        switch (text)
        {
            case "off":
                mode = ComputeMode.Off;
                return true;
            case "calibrated":
                mode = ComputeMode.Calibrated;
                return true;
            case "paper":
                mode = ComputeMode.Paper;
                return true;
            default:
                mode = default;
                return false;
        }
    }
}

/// <summary>
/// The rates file <c>camdoop calibrate</c> writes: bits of input per second of one core for each kind of work, the
/// cores that run map tasks, the job the rates were measured with, and the machine.
/// </summary>
public sealed record ComputeRatesFile
{
    [JsonPropertyName("job")]
    public required string Job { get; init; }

    [JsonPropertyName("mapBitsPerSecond")]
    public required double MapBitsPerSecond { get; init; }

    [JsonPropertyName("mapCores")]
    public required int MapCores { get; init; }

    [JsonPropertyName("mergeBitsPerSecond")]
    public required double MergeBitsPerSecond { get; init; }

    [JsonPropertyName("reduceBitsPerSecond")]
    public required double ReduceBitsPerSecond { get; init; }

    [JsonPropertyName("machine")]
    public string? Machine { get; init; }

    private static readonly JsonSerializerOptions JsonOptions = new() { WriteIndented = true };

    public ComputeRates ToRates() => new()
    {
        MapBitsPerSecond = MapBitsPerSecond,
        MapCores = MapCores,
        MergeBitsPerSecond = MergeBitsPerSecond,
        ReduceBitsPerSecond = ReduceBitsPerSecond,
    };

    public void Write(string path)
    {
        string? directory = Path.GetDirectoryName(Path.GetFullPath(path));
        if (directory is not null)
        {
            Directory.CreateDirectory(directory);
        }
        File.WriteAllText(path, JsonSerializer.Serialize(this, JsonOptions) + "\n");
    }

    /// <summary>Reads and checks a rates file; an <see cref="InvalidDataException"/> or <see cref="IOException"/> says what is wrong in one line.</summary>
    public static ComputeRatesFile Read(string path)
    {
        if (!File.Exists(path))
        {
            throw new FileNotFoundException($"compute rates file '{path}' does not exist (make it with camdoop calibrate)", path);
        }
        ComputeRatesFile? file;
        try
        {
            file = JsonSerializer.Deserialize<ComputeRatesFile>(File.ReadAllText(path));
        }
        catch (JsonException ex)
        {
            throw new InvalidDataException($"compute rates file '{path}' is not a rates file: {ex.Message}", ex);
        }
        if (file is null)
        {
            throw new InvalidDataException($"compute rates file '{path}' is empty");
        }
        try
        {
            file.ToRates().Validate();
        }
        catch (ArgumentOutOfRangeException)
        {
            throw new InvalidDataException($"compute rates file '{path}' holds a rate or core count that is not positive");
        }
        return file;
    }
}

namespace Camdoop.MapReduce.Jobs.Control;

/// <summary>Where reduce output goes.</summary>
public enum OutputKind : byte
{
    /// <summary>One file part-NNNNN per reduce task in <see cref="OutputTarget.Directory"/> under the root's data directory.</summary>
    LocalFiles = 0,

    /// <summary>Formatted and counted (bytes, records, checksum) but not stored: the paper's simulator runs (§5.2).</summary>
    Discard = 1,
}

/// <summary>Where a job's reduce tasks write their output.</summary>
public sealed record OutputTarget(OutputKind Kind, string Directory)
{
    /// <summary>Default: files under "jobs/&lt;job id&gt;/output" of each root's data directory.</summary>
    public static OutputTarget LocalFiles(string directory = "") => new(OutputKind.LocalFiles, directory);

    public static OutputTarget Discard { get; } = new(OutputKind.Discard, "");
}

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// One program of a streaming job: its role ("mapper", "combiner" or "reducer"), the name it was given by (what
/// errors show), and the executable file that runs, with its own interpreter line (#!).
/// </summary>
public sealed record StreamingCommand(string Role, string Name, string Path)
{
    public override string ToString() => $"{Role} '{Name}'";
}

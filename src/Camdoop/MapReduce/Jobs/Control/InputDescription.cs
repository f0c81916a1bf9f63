namespace Camdoop.MapReduce.Jobs.Control;

/// <summary>
/// A job's input as seen by each server: a path relative to the server's data directory, naming either one input
/// file or a directory whose files (sorted by name) are the server's chunks; every file is one map task. A server
/// without that path has no map task. Inputs may also be handed to the service already mapped (the simulator's
/// harness maps outside the event loop), in which case the path is informational.
/// </summary>
public sealed record InputDescription(string RelativePath)
{
    public static InputDescription Default { get; } = new("input");
}

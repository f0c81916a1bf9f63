namespace Camdoop.JobControl.Wire;

/// <summary>Where a job is, as its coordinator sees it.</summary>
public enum JobState : byte
{
    Mapping = 0,
    Shuffling = 1,
    Done = 2,
    Failed = 3,

    /// <summary>Cancelled by an operator (`camdoop kill`) while it ran.</summary>
    Killed = 4,
}

public static class JobStates
{
    /// <summary>The state's name in replies and reports: mapping, shuffling, done, failed, killed.</summary>
    public static string Name(this JobState state) => state switch
    {
        JobState.Mapping => "mapping",
        JobState.Shuffling => "shuffling",
        JobState.Done => "done",
        JobState.Failed => "failed",
        JobState.Killed => "killed",
        _ => throw new ArgumentOutOfRangeException(nameof(state)),
    };

    public static bool IsOver(this JobState state) => state is JobState.Done or JobState.Failed or JobState.Killed;
}

/// <summary>
/// A server the coordinator saw become unreachable during a job: when (Unix milliseconds, as every coordinator can
/// read them after a takeover) and in which phase ("mapping", "shuffling", or "finishing" once every reduce task
/// had written its output).
/// </summary>
public sealed record ServerLoss(Runtime.Topology.Coordinate Server, long DetectedUnixMs, string During);

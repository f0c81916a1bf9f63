using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;

namespace Camdoop.JobControl;

/// <summary>
/// Runs one map task of a job over one input chunk, off the event loop: a server writes indexed run files to its
/// disk (<see cref="RunFileMapTaskRunner"/>); a simulator may keep the runs in memory and map each chunk once for
/// every run that shares it. Map tasks are pure functions of (job, chunk, R), so both give the same output.
/// </summary>
public interface IMapTaskRunner
{
    /// <summary>Maps the chunk stored at <paramref name="chunkPath"/>.</summary>
    MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, string chunkPath, string dataDirectory);

    /// <summary>Maps a chunk read into memory (a lost server's map task run again here).</summary>
    MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, ReadOnlyMemory<byte> bytes, string dataDirectory);
}

/// <summary>A server's map tasks: one indexed run file per map task under the job's directory (<see cref="RunFileLayout"/>).</summary>
public sealed class RunFileMapTaskRunner(long sortBufferBytes = 64L * 1024 * 1024) : IMapTaskRunner
{
    public MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, string chunkPath, string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(description);
        return MapTask.Run(job, chunkPath, Options(description, chunk, dataDirectory));
    }

    public MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, ReadOnlyMemory<byte> bytes, string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(description);
        return MapTask.Run(job, bytes, Options(description, chunk, dataDirectory));
    }

    private MapTaskOptions Options(JobDescription description, Key chunk, string dataDirectory) => new()
    {
        ReduceTasks = description.ReduceTasks,
        JobId = description.JobId,
        MapTaskId = chunk.Middle,
        OutputDirectory = RunFileLayout.MapTaskDirectory(dataDirectory, description.JobId, chunk.Middle),
        SortBufferBytes = sortBufferBytes,
    };
}

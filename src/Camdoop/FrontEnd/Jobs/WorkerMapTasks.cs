using Camdoop.KeyRouting;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.FrontEnd.Jobs;

/// <summary>
/// A node's answer to which map tasks ran where (the chunk ids each server mapped, as the job's start told every
/// server) and how to run one of a failed server's again here: read a replica of its chunk (this server is usually
/// one, the chunk store keeping replicas where the chunk's id remaps) and map it off the event loop.
/// </summary>
internal sealed class WorkerMapTasks(JobControlService service, JobControlService.WorkerJob work, IReadOnlyDictionary<Coordinate, IReadOnlyList<Key>> directory)
    : IMapTaskSource
{
    public IReadOnlyList<Key> MapTasksOf(Coordinate server) => directory.GetValueOrDefault(server) ?? [];

    public void Rerun(Key mapTask, Coordinate server, Action<MapOutput?, string?> done)
    {
        var context = service.Context;
        var description = work.Description;
        service.Store.Read(mapTask, result =>
        {
            if (work.Ended)
            {
                return;
            }
            if (!result.Ok)
            {
                done(null, $"no replica of its input chunk {mapTask} could be read: {result.Error}");
                return;
            }
            var bytes = result.Bytes;
            string dataDirectory = context.DataDirectory;
            MapOutput? output = null;
            string? error = null;
            context.RunOffLoop(
                () =>
                {
                    try
                    {
                        var job = service.Options.Jobs.Create(description.Job);
                        output = MapTask.Run(job, bytes, new MapTaskOptions
                        {
                            ReduceTasks = description.ReduceTasks,
                            JobId = description.JobId,
                            MapTaskId = mapTask.Middle,
                            OutputDirectory = RunFileLayout.MapTaskDirectory(dataDirectory, description.JobId, mapTask.Middle),
                        });
                    }
                    // a bad chunk or disk fails the re-run (and the job), never the server
                    catch (Exception e)
                    {
                        error = $"{e.GetType().Name}: {e.Message}";
                    }
                },
                () =>
                {
                    if (output is not null)
                    {
                        context.Log(LogLevel.Info, $"job {description.JobId:x16}: map task {mapTask} of failed server {server.Name} ran again here");
                    }
                    done(output, error);
                });
        });
    }
}

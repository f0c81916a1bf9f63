using Camdoop.KeyRouting;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// A server's answer to which map tasks ran where (the chunk ids each server mapped, as the job's start told every
/// server) and how to run one of a failed server's again here: read a replica of its chunk (this server is usually
/// one, the chunk store keeping replicas where the chunk's id remaps) and map it off the event loop.
/// </summary>
internal sealed class WorkerMapTasks(ControlContext control, IMapTaskRunner runner, WorkerJob work) : IMapTaskSource
{
    public IReadOnlyList<Key> MapTasksOf(Coordinate server) => work.Directory.GetValueOrDefault(control.Hosts.IndexOf(server)) ?? [];

    public void Rerun(Key mapTask, Coordinate server, Action<MapOutput?, string?> done)
    {
        var context = control.Node;
        var description = work.Description;
        if (control.Store is not { } store)
        {
            done(null, $"no chunk store here to read the input chunk {mapTask} of failed server {server.Name}");
            return;
        }
        store.Read(mapTask, result =>
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
                        var job = control.Options.Jobs.Create(description.Job);
                        output = runner.Run(job, description, mapTask, bytes, dataDirectory);
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
                        context.Log(LogLevel.Info, $"job {work.JobId:x16}: map task {mapTask} of failed server {server.Name} ran again here");
                    }
                    done(output, error);
                });
        });
    }
}

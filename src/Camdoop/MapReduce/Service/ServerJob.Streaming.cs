using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;

namespace Camdoop.MapReduce.Service;

// A streaming job's reduce tasks: each root reducer writes its task's records for the reducer program, which runs off
// the event loop once they are all in (StreamingReduce); the task is complete when the program's output is.
public sealed partial class ServerJob
{
    // Reducer programs running for this job's reduce tasks rooted here.
    private int _reducerPrograms;

    private void RunReducerProgram(RootReducer root, StreamingJob job)
    {
        string? outputPath = Description.Output.Kind == OutputKind.LocalFiles ? OutputPath(root.ReduceTask) : null;
        _reducerPrograms++;
        StreamingReduce.Start(Transport.Context, job, root.Output.Path!, outputPath,
            output =>
            {
                _reducerPrograms--;
                if (Failure is not null)
                {
                    output.Dispose();
                    return;
                }
                Complete(root, output, Transport.Context.Now);
            },
            reason =>
            {
                _reducerPrograms--;
                if (Failure is null)
                {
                    _service.FailJob(this, reason);
                }
            });
    }
}

using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Reference;
using static Camdoop.MapReduce.Tests.JobControl.JobControlCube;

namespace Camdoop.MapReduce.Tests.JobControl;

/// <summary>
/// A server lost once every reduce task is done, while the coordinator waits for the servers to drop their parts:
/// the job is done, and every output stays listed, the lost server's too (its file is on its disk, and a server only
/// silent for a while still serves it when back), on the coordinator and on the copies of its state.
/// </summary>
public class JobOutputLossTests
{
    [Fact]
    public void AServerLostWhileTheJobFinishesLeavesEveryOutputListed()
    {
        using var cube = new JobControlCube();
        var inputs = Corpus(20_000);
        var job = cube.Submit(new JobDescription
        {
            JobId = 0xf1,
            Job = new JobSpec(WordCountJob.JobName),
            ReduceTasks = 27,
            Mode = ShuffleMode.Camdoop,
        }, cube.Put("corpus", inputs));
        cube.RunUntil(() => job.Finishing || job.IsOver, "the job did not finish its reduce tasks");
        Assert.True(job.Finishing && !job.IsOver, "the job was over before its servers dropped their parts: the test proves nothing");
        var coordinator = cube.Jobs.CoordinatorOf(job.JobId)!.Value;
        var (victim, victimReport) = job.Reduces.Select(r => r!.Value).First(r => r.Server != coordinator && r.Server != JobControlCube.FrontEnd);
        cube.Sim.FailServer(victim, cube.Sim.Now);

        cube.RunUntil(() => job.IsOver, "the job did not end once the lost server was given up on");
        Assert.True(job.State == JobState.Done, job.Failure);
        Assert.Contains(job.Losses, l => l.Server == victim && l.During == "finishing");
        var snapshot = job.Snapshot(coordinator, cube.Sim.Now);
        Assert.Equal(27, snapshot.Outputs.Count);
        Assert.Contains(snapshot.Outputs, o => o.Server == victim && o.ReduceTask == victimReport.ReduceTask);

        // The outputs are the reference's, the lost server's file included (its disk outlives its silence).
        var reference = ReferenceMapReduce.Run(new WordCountJob(), [.. inputs.Select(i => (ReadOnlyMemory<byte>)i)], 27);
        foreach (var output in snapshot.Outputs)
        {
            Assert.Equal(reference.Format(output.ReduceTask), File.ReadAllBytes(Path.Combine(cube.Sim.DataDirectoryOf(output.Server), output.Path!)));
        }

        // The copies of the job's state (kept for a takeover) list every output too.
        cube.Sim.RunUntil(cube.Sim.Now + (500 * Ms));
        var copies = Cube.All().Where(c => !cube.Sim.IsServerFailed(c))
            .Select(c => cube.JobsAt(c).KeptCopy(job.JobId)).Where(c => c is not null).ToList();
        Assert.NotEmpty(copies);
        Assert.All(copies, c => Assert.Equal(27, c!.Reduces.Count(r => r is not null)));
    }
}

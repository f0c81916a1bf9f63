using Camdoop.JobControl;
using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Reference;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using static Camdoop.MapReduce.Tests.JobControl.JobControlCube;

namespace Camdoop.MapReduce.Tests.JobControl;

/// <summary>
/// Two jobs at once on the simulated cube, through job control: killing one mid-shuffle drops it on every server
/// (no vertex, stream or buffer of it is left) while the other finishes with exactly the reference's output. Every
/// server's jobs table then shows the killed job stopped and the other finished, on every server, even where its
/// part was dropped before its streams' last acknowledgements came (the coordinator's End says it completed).
/// </summary>
public class JobKillTests
{
    private static JobDescription WordCount(ulong id, int reducers, ShuffleMode mode) => new()
    {
        JobId = id,
        Job = new JobSpec(WordCountJob.JobName),
        ReduceTasks = reducers,
        Mode = mode,
    };

    [Fact]
    public void KillingOneOfTwoRunningJobsFreesItEverywhereAndTheOtherIsExact()
    {
        // Slow links (100 Mbit/s) so that both shuffles are still running when one is killed.
        using var cube = new JobControlCube(linkRateBitsPerSecond: 100_000_000);
        var tables = Cube.All().Select(c => new CamdoopJobSource(cube.Camdoop(c))).ToList();
        var victimInput = cube.Put("big", Corpus(200_000, seed: 3));
        var inputs = Corpus(60_000);
        var survivorInput = cube.Put("corpus", inputs);
        var victim = cube.Submit(WordCount(0xdead, 27, ShuffleMode.NoAgg), victimInput);
        var survivor = cube.Submit(WordCount(0xbeef, 3, ShuffleMode.NoAgg), survivorInput);
        cube.RunUntil(() => victim.State == JobState.Shuffling && survivor.State == JobState.Shuffling, "the shuffles did not start");
        // Let the victim's streams fill their windows first, so that the kill has buffers to free.
        cube.Sim.RunUntil(cube.Sim.Now + (5 * Ms));
        Assert.Equal(JobState.Shuffling, victim.State);
        long rentedAtKill = Cube.All().Sum(c => cube.Camdoop(c).Transport.Buffers.RentedBytes);
        Assert.True(rentedAtKill > 0, "no shuffle buffer was in use when the job was killed: the test proves nothing");
        Assert.All(Cube.All(), c => Assert.NotNull(cube.Camdoop(c).GetJob(0xdead)));

        cube.CoordinatorOf(0xdead).Kill(0xdead);
        Assert.Equal(JobState.Killed, victim.State);
        cube.RunUntil(() => victim.EndedEverywhere, "not every server dropped the killed job");
        Assert.False(survivor.IsOver, "the other job finished before the killed one was dropped: the test proves nothing");
        foreach (var c in Cube.All())
        {
            Assert.Null(cube.Camdoop(c).GetJob(0xdead));
            Assert.NotNull(cube.Camdoop(c).GetJob(0xbeef));
        }

        cube.RunUntil(() => survivor.IsOver, "the other job did not finish");
        Assert.True(survivor.State == JobState.Done, survivor.Failure);
        var reference = ReferenceMapReduce.Run(new WordCountJob(), inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), 3);
        for (int r = 0; r < 3; r++)
        {
            var (server, report) = survivor.Reduces[r]!.Value;
            Assert.Equal(reference.Format(r), File.ReadAllBytes(Path.Combine(cube.Sim.DataDirectoryOf(server), report.OutputPath!)));
        }
        cube.RunUntil(() => survivor.EndedEverywhere, "not every server dropped the finished job");
        cube.Sim.RunUntil(cube.Sim.Now + (1_000 * Ms)); // the killed job's files are deleted off the loop
        foreach (var c in Cube.All())
        {
            var camdoop = cube.Camdoop(c);
            Assert.Empty(camdoop.Jobs);
            // Every buffer either job rented is back: a killed job's vertices, streams and mergers leak none.
            Assert.True(camdoop.Transport.Buffers.RentedBytes == 0, $"{c.Name} still has {camdoop.Transport.Buffers.RentedBytes} shuffle buffer bytes rented");
            Assert.False(Directory.Exists(Path.Combine(cube.Sim.DataDirectoryOf(c), "jobs", "000000000000dead")), $"{c.Name} kept the killed job's files");
        }
        foreach (var table in tables)
        {
            var rows = table.Snapshot();
            Assert.Equal(Monitoring.Jobs.JobState.Stopped, rows.Single(j => j.JobId == 0xdead).State);
            Assert.Equal(Monitoring.Jobs.JobState.Finished, rows.Single(j => j.JobId == 0xbeef).State);
        }
    }

    [Fact]
    public void APartDroppedAtTheJobsCompletionShowsFinishedAndOneDroppedOtherwiseStopped()
    {
        // Slow links: the shuffle is still running when the parts are dropped, as when a server hears the job's End
        // before its streams' last acknowledgements.
        using var cube = new JobControlCube(linkRateBitsPerSecond: 100_000_000);
        var tables = Cube.All().ToDictionary(c => c, c => new CamdoopJobSource(cube.Camdoop(c)));
        var job = cube.Submit(WordCount(0xc0de, 27, ShuffleMode.Camdoop), cube.Put("corpus", Corpus(100_000)));
        cube.RunUntil(() => job.State == JobState.Shuffling, "the shuffle did not start");
        cube.Sim.RunUntil(cube.Sim.Now + (2 * Ms));
        Coordinate completed = new(1, 1, 1), dropped = new(2, 2, 2);
        Assert.False(cube.Camdoop(completed).GetJob(0xc0de)!.IsFinished, "the part was finished already: the test proves nothing");

        Assert.True(cube.Camdoop(completed).RemoveJob(0xc0de, completed: true));
        Assert.True(cube.Camdoop(dropped).RemoveJob(0xc0de));

        Assert.Equal(Monitoring.Jobs.JobState.Finished, tables[completed].Snapshot().Single(j => j.JobId == 0xc0de).State);
        Assert.Equal(Monitoring.Jobs.JobState.Stopped, tables[dropped].Snapshot().Single(j => j.JobId == 0xc0de).State);
        Assert.Equal(Monitoring.Jobs.JobState.Running, tables[new Coordinate(0, 1, 2)].Snapshot().Single(j => j.JobId == 0xc0de).State);
        cube.CoordinatorOf(0xc0de).Kill(0xc0de);
    }

    [Fact]
    public void OnlyARunningJobCanBeKilled()
    {
        using var cube = new JobControlCube();
        var input = cube.Put("corpus", Corpus(5_000));
        var done = cube.Submit(WordCount(7, 1, ShuffleMode.Camdoop), input);
        cube.RunUntil(() => done.IsOver, "the job did not finish");
        Assert.Equal(JobState.Done, done.State);

        var finished = Assert.Throws<JobControlException>(() => cube.CoordinatorOf(7).Kill(7));
        Assert.Equal("job 0000000000000007 has already finished (done): nothing to kill", finished.Message);
        var unknown = Assert.Throws<JobControlException>(() => cube.CoordinatorOf(8).Kill(8));
        Assert.StartsWith("unknown job 0000000000000008", unknown.Message, StringComparison.Ordinal);

        var killed = cube.Submit(WordCount(9, 1, ShuffleMode.Camdoop), input);
        cube.CoordinatorOf(9).Kill(9);
        Assert.Equal(JobState.Killed, killed.State);
        var again = Assert.Throws<JobControlException>(() => cube.CoordinatorOf(9).Kill(9));
        Assert.Equal("job 0000000000000009 has already finished (killed): nothing to kill", again.Message);
    }
}

using Camdoop.JobControl;
using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.JobControl;

/// <summary>What a job's tracker counts across the attempts of a TCP Camdoop job that starts over.</summary>
public class JobTrackerTests
{
    [Fact]
    public void AJobThatStartsOverCountsItsInputOnceNotOncePerAttempt()
    {
        var torus = new Torus(2, 2, 2);
        var servers = Enumerable.Range(0, 3).Select(torus.CoordinateOf).ToList();
        var record = new JobRecord
        {
            JobId = 0x7c,
            Attempt = 0,
            Description = new JobDescription { JobId = 0x7c, Job = new JobSpec(WordCountJob.JobName), ReduceTasks = 3, Mode = ShuffleMode.Tcp },
            InputName = "corpus",
            InputChunks = 3,
            Directory = new SortedDictionary<int, IReadOnlyList<Key>>(Enumerable.Range(0, 3).ToDictionary(s => s, s => (IReadOnlyList<Key>)[Key.FromString($"chunk{s}")])),
            Reduces = new (Coordinate, ReduceReport)?[3],
        };
        var job = new JobTracker(record, torus, torus.Count, servers, now: 0, unixNowMs: 0);
        foreach (var server in servers)
        {
            Assert.True(job.RecordMap(server, new MapReport(true, 1, 1000, 10, 700, 0, null)));
        }
        Assert.Equal(3000, job.InputBytes);

        // A server is lost: the job starts over on the two left, which map all three chunks between them.
        job.Restart(servers.Take(2), torus, torus.Count);
        Assert.True(job.RecordMap(servers[0], new MapReport(true, 2, 2000, 20, 1400, 0, null)));
        Assert.True(job.RecordMap(servers[1], new MapReport(true, 1, 1000, 10, 700, 0, null)));
        Assert.Equal(3000, job.InputBytes);
        Assert.Equal(30, job.InputRecords);
        Assert.Equal(2100, job.IntermediateBytes);
    }
}

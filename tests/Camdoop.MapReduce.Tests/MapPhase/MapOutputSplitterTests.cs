using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.MapPhase;

public sealed class MapOutputSplitterTests
{
    public static TheoryData<string, int> JobsAndReduceTasks()
    {
        var data = new TheoryData<string, int>();
        foreach (string job in new[] { "synthetic", "wordcount", "sort", "topk", "list-values" })
        {
            foreach (int r in new[] { 1, 2, 7, 64 })
            {
                data.Add(job, r);
            }
        }
        return data;
    }

    private static (IMapReduceJob Job, byte[] Input) JobAndInput(string name) => name switch
    {
        "synthetic" => (new SyntheticJob(), new SyntheticDataGenerator(4, 0.3, 40_000, 5).GenerateServer(1)),
        "wordcount" => (new WordCountJob(), new TextDataGenerator(1, 40_000, 6, vocabularySize: 2000).GenerateServer(0)),
        "sort" => (new SortJob(), new SortDataGenerator(1, 40_000, 7).GenerateServer(0)),
        "topk" => (new TopKJob(), new TopKDataGenerator(1, 40_000, 8).GenerateServer(0)),
        // Not associative: nothing is combined, and equal keys keep their values' order.
        _ => (new ListValuesJob(), KeyValueLines(9)),
    };

    /// <summary>"key\tvalue" lines over a few hundred keys, each key with many values in no order.</summary>
    private static byte[] KeyValueLines(int seed)
    {
        var random = new Random(seed);
        var text = new System.Text.StringBuilder();
        for (int i = 0; i < 3000; i++)
        {
            text.Append("key").Append(random.Next(300)).Append('\t').Append(random.Next(10)).Append('\n');
        }
        return System.Text.Encoding.ASCII.GetBytes(text.ToString());
    }

    [Theory]
    [MemberData(nameof(JobsAndReduceTasks))]
    public void SplittingTheOneTaskOutputEqualsMappingAgainByteForByte(string name, int reduceTasks)
    {
        var (job, input) = JobAndInput(name);
        var once = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = 1, JobId = 3, MapTaskId = 11 });
        var options = new MapTaskOptions { ReduceTasks = reduceTasks, JobId = 4, MapTaskId = 12 };
        var direct = MapTask.Run(job, input, options);
        var split = MapOutputSplitter.Split(job, once, options);

        Assert.True(split.InMemory);
        Assert.Equal((4UL, 12UL, reduceTasks), (split.JobId, split.MapTaskId, split.ReduceTasks));
        long records = 0;
        for (int r = 0; r < reduceTasks; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                Assert.Equal(direct.Payload(r, s).ToArray(), split.Payload(r, s).ToArray());
                Assert.Equal(direct.Header(r, s), split.Header(r, s));
                split.VerifyRun(r, s);
                records += split.Header(r, s).RecordCount;
            }
        }
        // TopK's map emits one record (the server's k best under one key); every other job many.
        Assert.True(records >= (name == "topk" ? 1 : 50), $"only {records} records: the case tests little");
        var (a, b) = (direct.Stats, split.Stats);
        Assert.Equal((a.InputBytes, a.InputRecords, a.MalformedRecords, a.MapOutputRecords, a.MapOutputLogicalBytes, a.Spills),
            (b.InputBytes, b.InputRecords, b.MalformedRecords, b.MapOutputRecords, b.MapOutputLogicalBytes, b.Spills));
        Assert.Equal(a.RecordsPerReduceTask, b.RecordsPerReduceTask);
        Assert.Equal(a.LogicalBytesPerReduceTask, b.LogicalBytesPerReduceTask);
        Assert.Equal(a.EncodedBytesPerReduceTask, b.EncodedBytesPerReduceTask);
    }

    [Fact]
    public void OnlyAnInMemoryOutputForOneTaskSplits()
    {
        var job = new WordCountJob();
        var input = new TextDataGenerator(1, 5_000, 1, vocabularySize: 100).GenerateServer(0);
        var two = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = 2 });
        var error = Assert.Throws<ArgumentException>(() => MapOutputSplitter.Split(job, two, new MapTaskOptions { ReduceTasks = 4 }));
        Assert.Contains("one reduce task", error.Message);
        var one = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = 1 });
        Assert.Throws<ArgumentException>(() => MapOutputSplitter.Split(job, one, new MapTaskOptions { ReduceTasks = 4, OutputDirectory = "x" }));
        Assert.Throws<ArgumentOutOfRangeException>(() => MapOutputSplitter.Split(job, one, new MapTaskOptions { ReduceTasks = 0 }));
    }
}

using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.Jobs;

/// <summary>Every built-in job through map phase, on-path merges and the final reduce equals the reference MapReduce.</summary>
public sealed class EndToEndTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-e2e-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static void AssertMatchesReference(IMapReduceJob job, IReadOnlyList<byte[]> inputs, int reduceTasks, int seed, bool noAgg = false, string? runDirectory = null)
    {
        var reference = ReferenceMapReduce.Run(job, inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), reduceTasks);
        var actual = ShufflePipeline.Run(job, inputs, reduceTasks, new Random(seed), noAgg, runDirectory);
        Assert.True(reference.Outputs.Sum(o => o.Count) > 0, "the reference produced no output; the test would prove nothing");
        for (int r = 0; r < reduceTasks; r++)
        {
            var expected = reference.Outputs[r].Select(p => new Rec(p.Key, p.Value)).ToList();
            Assert.Equal(expected.Count, actual[r].Count);
            Assert.Equal(expected, actual[r]);
        }
    }

    public static TheoryData<int, bool> Configurations => new() { { 1, false }, { 4, false }, { 9, true } };

    [Theory]
    [MemberData(nameof(Configurations))]
    public void WordCount(int reduceTasks, bool noAgg)
    {
        var gen = new TextDataGenerator(9, 12_000, seed: 5, vocabularySize: 2000);
        AssertMatchesReference(new WordCountJob(), Enumerable.Range(0, 9).Select(gen.GenerateServer).ToList(), reduceTasks, 11, noAgg);
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public void Synthetic(int reduceTasks, bool noAgg)
    {
        var gen = new SyntheticDataGenerator(9, 0.5, 10_000, seed: 6);
        AssertMatchesReference(new SyntheticJob(), Enumerable.Range(0, 9).Select(gen.GenerateServer).ToList(), reduceTasks, 12, noAgg);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(5)]
    public void Sort(int reduceTasks)
    {
        var gen = new SortDataGenerator(7, 20_000, seed: 7);
        AssertMatchesReference(new SortJob(), Enumerable.Range(0, 7).Select(gen.GenerateServer).ToList(), reduceTasks, 13);
    }

    [Theory]
    [InlineData(3, false)]
    [InlineData(25, true)]
    public void TopK(int k, bool noAgg)
    {
        var gen = new TopKDataGenerator(8, 8_000, seed: 8);
        AssertMatchesReference(new TopKJob(k), Enumerable.Range(0, 8).Select(gen.GenerateServer).ToList(), 1, 14, noAgg);
    }

    [Fact]
    public void Median()
    {
        var random = new Random(15);
        var inputs = Enumerable.Range(0, 6).Select(_ =>
            System.Text.Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 400).Select(_ =>
                $"g{random.Next(30)}\t{random.Next(1000)}\n")))).ToList();
        AssertMatchesReference(new MedianJob(), inputs, 3, 16);
    }

    [Fact]
    public void RunFilesOnDiskGiveTheSameResult()
    {
        var gen = new SyntheticDataGenerator(5, 0.3, 8_000, seed: 9);
        AssertMatchesReference(new SyntheticJob(), Enumerable.Range(0, 5).Select(gen.GenerateServer).ToList(), 2, 17, runDirectory: _directory);
        // One indexed run file per map task (each holding 2 x 6 segments).
        Assert.Equal(5, Directory.GetFiles(_directory, Camdoop.MapReduce.MapPhase.RunFileLayout.RunFileName, SearchOption.AllDirectories).Length);
    }

    [Fact]
    public void TwentySevenServersAllReduceTasks()
    {
        var gen = new SyntheticDataGenerator(27, 0, 3_000, seed: 10);
        AssertMatchesReference(new SyntheticJob(), Enumerable.Range(0, 27).Select(gen.GenerateServer).ToList(), 27, 18);
    }
}

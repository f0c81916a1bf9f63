namespace Camdoop.Cli.Tests.Sim;

/// <summary>`camdoop demo`, the README's first command: both runs verified, and the top words are English's.</summary>
public sealed class DemoCommandTests
{
    [Fact]
    public void TheDemoCountsEnglishWordsAndBothRunsEqualTheReference()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run("demo", "--torus", "2x2x2", "--input-per-server", "64KB", "--top", "3");
        Assert.True(code == 0, stderr);
        Assert.Contains("both runs identical to the single-process reference", stdout, StringComparison.Ordinal);
        var top = stdout.Split('\n').SkipWhile(l => !l.StartsWith("Top 3 words", StringComparison.Ordinal)).Skip(1).Take(3)
            .Select(l => l.Trim().Split(' ')[0]).ToArray();
        // Zipf over English's ranking: the three most frequent words of English come first, in order.
        Assert.Equal(["the", "of", "and"], top);
        Assert.Contains("On-path aggregation:", stdout, StringComparison.Ordinal);
    }
}

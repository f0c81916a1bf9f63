using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.MapReduce.Tests.FrontEnd;

public class NamesTests
{
    [Theory]
    [InlineData("corpus")]
    [InlineData("wiki-2024_05.txt")]
    [InlineData("a")]
    [InlineData("a.b.c")]
    public void GoodDatasetNamesPass(string name)
    {
        Assert.Null(Names.DatasetProblem(name));
        Assert.Equal(name, Names.CheckDataset(name));
        Assert.True(ChunkMeta.IsValidName(name)); // the chunk store takes whatever the front-end lets through
    }

    [Theory]
    [InlineData("", "it is empty")]
    [InlineData("../etc/passwd", "it contains a path separator ('/')")]
    [InlineData("a\\b", "it contains a path separator ('\\')")]
    [InlineData("..", "it starts with '.'")]
    [InlineData(".hidden", "it starts with '.'")]
    [InlineData("a..b", "it contains '..'")]
    [InlineData("tab\there", "it contains a control or non-ASCII character")]
    [InlineData("esc\u001b[2J", "it contains a control or non-ASCII character")]
    [InlineData("caf\u00e9", "it contains a control or non-ASCII character")]
    [InlineData("two words", "it contains ' ' (names use letters, digits, '.', '_' and '-')")]
    [InlineData("a:b", "it contains ':' (names use letters, digits, '.', '_' and '-')")]
    public void BadDatasetNamesAreRefusedWithTheReason(string name, string problem)
    {
        Assert.Equal(problem, Names.DatasetProblem(name));
        var e = Assert.Throws<FrontEndException>(() => Names.CheckDataset(name));
        Assert.EndsWith($"is not a valid dataset name: {problem}", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(e.Message, c => c < ' ' || c > '~');
    }

    [Fact]
    public void NamesAreBoundedInLength()
    {
        Assert.Null(Names.DatasetProblem(new string('a', Names.MaxDatasetLength)));
        Assert.Equal($"it is 201 characters long, over the limit of {Names.MaxDatasetLength}", Names.DatasetProblem(new string('a', 201)));
        Assert.Null(Names.JobProblem("topk?k=20"));
        Assert.Null(Names.JobProblem(new string('j', Names.MaxJobLength)));
        Assert.Equal($"it is {Names.MaxJobLength + 1} characters long, over the limit of {Names.MaxJobLength}", Names.JobProblem(new string('j', Names.MaxJobLength + 1)));
    }

    [Fact]
    public void JobTextsMustBePrintable()
    {
        Assert.Equal("it is empty", Names.JobProblem(""));
        Assert.Equal("it contains a control or non-ASCII character", Names.JobProblem("wordcount\n"));
        var e = Assert.Throws<FrontEndException>(() => Names.CheckJob("sort\u0007"));
        Assert.Equal("'sort\\x07' is not a valid job: it contains a control or non-ASCII character", e.Message);
    }

    [Fact]
    public void QuotedNamesShowControlCharactersEscapedAndAreCutShort()
    {
        Assert.Equal("'a\\x1b[31mb'", Names.Quote("a\u001b[31mb"));
        Assert.Equal("'\\u2028'", Names.Quote("\u2028"));
        string quoted = Names.Quote(new string('n', 500));
        Assert.Equal("'" + new string('n', 64) + "'...", quoted);
    }
}

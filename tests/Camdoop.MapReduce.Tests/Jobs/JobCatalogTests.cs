using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.Jobs;

/// <summary>
/// What a server may load: built-ins always, job assemblies only from its allowed directory, by file name. Real
/// files and links in a temporary directory; the job assembly is this test assembly, copied there.
/// </summary>
public sealed class JobCatalogTests : IDisposable
{
    private static readonly string TestAssembly = typeof(UserScaledCountJob).Assembly.Location;
    private static readonly string JobType = typeof(UserScaledCountJob).FullName!;

    private readonly string _root = Directory.CreateTempSubdirectory("camdoop-jobcatalog-").FullName;

    public JobCatalogTests()
    {
        Directory.CreateDirectory(Allowed);
        Directory.CreateDirectory(Outside);
        File.Copy(TestAssembly, Path.Combine(Allowed, "Jobs.dll"));
        File.Copy(TestAssembly, Path.Combine(Outside, "Jobs.dll"));
    }

    private string Allowed => Path.Combine(_root, "allowed");

    private string Outside => Path.Combine(_root, "outside");

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public void AnAssemblyInTheDirectoryLoadsByFileNameAndRuns()
    {
        var job = JobCatalog.ForServer(Allowed).Create($"Jobs.dll#{JobType}?scale=2");
        Assert.Equal("user-scaled-count", job.Name);
        var result = ReferenceMapReduce.Run(job, [(ReadOnlyMemory<byte>)"a\nb\na\n"u8.ToArray()], 1);
        Assert.Equal("a\t\0\0\0\0\0\0\0\u0004\nb\t\0\0\0\0\0\0\0\u0002\n", System.Text.Encoding.Latin1.GetString(result.Format(0)));
    }

    [Fact]
    public void BuiltInsNeedNoDirectory()
    {
        Assert.IsType<WordCountJob>(JobCatalog.BuiltInOnly.Create("wordcount"));
        Assert.IsType<TopKJob>(JobCatalog.ForServer(Allowed).Create("topk?k=3"));
    }

    [Theory]
    [InlineData("{outside}/Jobs.dll", "by its file name alone")]
    [InlineData("{allowed}/Jobs.dll", "by its file name alone")]
    [InlineData("../outside/Jobs.dll", "by its file name alone")]
    [InlineData("..", "by its file name alone")]
    [InlineData("sub/Jobs.dll", "by its file name alone")]
    [InlineData("sub\\Jobs.dll", "by its file name alone")]
    [InlineData("Other.dll", "is not in this server's job assembly directory")]
    public void PathsAndMissingFilesAreRefused(string name, string reason)
    {
        name = name.Replace("{outside}", Outside, StringComparison.Ordinal).Replace("{allowed}", Allowed, StringComparison.Ordinal);
        var error = Assert.Throws<JobLoadException>(() => JobCatalog.ForServer(Allowed).Create($"{name}#{JobType}"));
        Assert.Contains(reason, error.Message, StringComparison.Ordinal);
        Assert.Contains($"'{name}'", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', error.Message);
    }

    [Fact]
    public void ALinkLeadingOutIsRefusedAndOneStayingInIsFollowed()
    {
        File.CreateSymbolicLink(Path.Combine(Allowed, "Escape.dll"), Path.Combine(Outside, "Jobs.dll"));
        File.CreateSymbolicLink(Path.Combine(Allowed, "Hop.dll"), "../outside/Jobs.dll");
        File.CreateSymbolicLink(Path.Combine(Allowed, "Current.dll"), "Jobs.dll");
        var catalog = JobCatalog.ForServer(Allowed);
        foreach (var link in new[] { "Escape.dll", "Hop.dll" })
        {
            var error = Assert.Throws<JobLoadException>(() => catalog.Create($"{link}#{JobType}"));
            Assert.Contains("a link leading out of the job assembly directory", error.Message, StringComparison.Ordinal);
        }
        Assert.Equal("user-scaled-count", catalog.Create($"Current.dll#{JobType}").Name);
    }

    /// <summary>
    /// <c>Tricky.dll -&gt; s/../Jobs.dll</c> reads as the directory's own Jobs.dll when '..' is applied to the text; the
    /// kernel follows <c>s</c> (a link to a directory outside) first, and its '..' then leads to the outside Jobs.dll.
    /// </summary>
    [Fact]
    public void ALinkThatEscapesOnlyAsTheKernelResolvesItIsRefused()
    {
        Directory.CreateDirectory(Path.Combine(Outside, "deep"));
        Directory.CreateSymbolicLink(Path.Combine(Allowed, "s"), Path.Combine(Outside, "deep"));
        File.CreateSymbolicLink(Path.Combine(Allowed, "Tricky.dll"), "s/../Jobs.dll");
        var error = Assert.Throws<JobLoadException>(() => JobCatalog.ForServer(Allowed).Create($"Tricky.dll#{JobType}"));
        Assert.Contains("a link leading out of the job assembly directory", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TheDirectoryMayItselfBeReachedThroughALink()
    {
        string viaLink = Path.Combine(_root, "via-link");
        Directory.CreateSymbolicLink(viaLink, Allowed);
        Assert.Equal("user-scaled-count", JobCatalog.ForServer(viaLink).Create($"Jobs.dll#{JobType}?scale=2").Name);
    }

    [Fact]
    public void AServerWithoutADirectoryRunsBuiltInsOnly()
    {
        var error = Assert.Throws<JobLoadException>(() => JobCatalog.BuiltInOnly.Create($"Jobs.dll#{JobType}"));
        Assert.Contains("this server loads no job assemblies", error.Message, StringComparison.Ordinal);
        // The simulator's catalog takes any path: the user runs his own code there.
        Assert.Equal("user-scaled-count", JobCatalog.AnyPath.Create($"{Path.Combine(Outside, "Jobs.dll")}#{JobType}").Name);
    }
}

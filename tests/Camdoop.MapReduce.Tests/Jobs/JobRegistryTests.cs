using System.Runtime.Loader;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.Jobs;

public class JobRegistryTests
{
    private static readonly string TestAssembly = typeof(UserScaledCountJob).Assembly.Location;

    [Theory]
    [InlineData("wordcount", typeof(WordCountJob))]
    [InlineData("Sort", typeof(SortJob))]
    [InlineData("synthetic", typeof(SyntheticJob))]
    [InlineData("topk", typeof(TopKJob))]
    [InlineData("median", typeof(MedianJob))]
    public void ResolvesBuiltInNames(string name, Type type) => Assert.IsType(type, JobRegistry.Create(name));

    [Fact]
    public void PassesOptionsAndRejectsBadOnes()
    {
        Assert.Equal(3, Assert.IsType<TopKJob>(JobRegistry.Create("topk?k=3")).K);
        Assert.Equal("topk?k=3", JobSpec.Parse("topk?k=3").ToString());
        Assert.Contains("k='x'", Assert.Throws<JobLoadException>(() => JobRegistry.Create("topk?k=x")).Message, StringComparison.Ordinal);
        Assert.Contains("between 1 and", Assert.Throws<JobLoadException>(() => JobRegistry.Create("topk?k=0")).Message, StringComparison.Ordinal);
        Assert.Throws<JobLoadException>(() => JobSpec.Parse("topk?k"));
        Assert.Throws<JobLoadException>(() => JobSpec.Parse("topk?k=1&k=2"));
    }

    [Fact]
    public void UnknownNameListsTheBuiltIns()
    {
        var error = Assert.Throws<JobLoadException>(() => JobRegistry.Create("pagerank"));
        Assert.Contains("unknown job 'pagerank'", error.Message, StringComparison.Ordinal);
        Assert.Contains("wordcount", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void LoadsAUserJobFromAnAssemblyFileIntoItsOwnContext()
    {
        var job = JobRegistry.Create($"{TestAssembly}#{typeof(UserScaledCountJob).FullName}?scale=3");
        Assert.Equal("user-scaled-count", job.Name);
        // A separate load context: the type is not the test's own copy, yet it implements the host's interface.
        Assert.NotSame(typeof(UserScaledCountJob), job.GetType());
        Assert.NotSame(AssemblyLoadContext.Default, AssemblyLoadContext.GetLoadContext(job.GetType().Assembly));
        var result = ReferenceMapReduce.Run(job, [(ReadOnlyMemory<byte>)"x\ny\nx\n"u8.ToArray()], 1);
        Assert.Equal("x\t\0\0\0\0\0\0\0\u0006\ny\t\0\0\0\0\0\0\0\u0003\n", System.Text.Encoding.Latin1.GetString(result.Format(0)));
        // Loading again reuses the assembly.
        Assert.Same(job.GetType(), JobRegistry.Create($"{TestAssembly}#{typeof(UserScaledCountJob).FullName}").GetType());
    }

    [Fact]
    public void UserJobErrorsAreClear()
    {
        string missing = Path.Combine(Path.GetTempPath(), "no-such-jobs.dll");
        Assert.Contains("does not exist", Assert.Throws<JobLoadException>(() => JobRegistry.Create($"{missing}#A.B")).Message, StringComparison.Ordinal);
        Assert.Contains("has no type 'No.Such.Type'",
            Assert.Throws<JobLoadException>(() => JobRegistry.Create($"{TestAssembly}#No.Such.Type")).Message, StringComparison.Ordinal);
        Assert.Contains("not a public, non-abstract class implementing",
            Assert.Throws<JobLoadException>(() => JobRegistry.Create($"{TestAssembly}#{typeof(MergeDriver).FullName}")).Message, StringComparison.Ordinal);
        Assert.Contains("needs a public constructor",
            Assert.Throws<JobLoadException>(() => JobRegistry.Create($"{TestAssembly}#{typeof(JobWithoutUsableConstructor).FullName}")).Message, StringComparison.Ordinal);
        string notAssembly = Path.GetTempFileName();
        try
        {
            Assert.Contains("not a loadable .NET assembly",
                Assert.Throws<JobLoadException>(() => JobRegistry.Create($"{notAssembly}#A.B")).Message, StringComparison.Ordinal);
        }
        finally
        {
            File.Delete(notAssembly);
        }
    }
}

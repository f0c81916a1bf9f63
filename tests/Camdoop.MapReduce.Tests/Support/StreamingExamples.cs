using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.Tests.Support;

/// <summary>The repository's streaming WordCount (examples/streaming: Python programs), found above the tests' directory.</summary>
public static class StreamingExamples
{
    public static string Directory
    {
        get
        {
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Camdoop.sln")))
            {
                directory = directory.Parent;
            }
            Assert.True(directory is not null, $"no directory above {AppContext.BaseDirectory} holds Camdoop.sln");
            return Path.Combine(directory!.FullName, "examples", "streaming");
        }
    }

    /// <summary>WordCount's mapper and reducer, and the reducer as its combiner when <paramref name="combiner"/>.</summary>
    public static StreamingJob WordCount(bool combiner) =>
        (StreamingJob)JobRegistry.Create(StreamingJob.Spec(
            Path.Combine(Directory, "wordcount_mapper.py"), Path.Combine(Directory, "wordcount_reducer.py"),
            combiner ? Path.Combine(Directory, "wordcount_reducer.py") : null));
}

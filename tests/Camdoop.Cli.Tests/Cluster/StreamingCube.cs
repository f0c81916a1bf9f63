using Camdoop.Cli.Tests.Support;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// A 2x2x2 testbed (prefix cdst, subnet 234) with a text corpus, and in its job assembly directory the repository's
/// streaming WordCount and a mapper that fails.
/// </summary>
public sealed class StreamingCube : EmulatedCube
{
    public const string Prefix = "cdst";

    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    public StreamingCube()
        : base(Prefix, 234, "--torus", "2x2x2")
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 8, BytesPerServer = 30_000, Seed = 23 });
        Corpus = [.. Enumerable.Range(0, 8).SelectMany(generator.GenerateServer)];
        SetUp(() =>
        {
            Put("corpus", Corpus);
            string directory = State.JobAssemblyDirectory!;
            Directory.CreateDirectory(directory);
            foreach (string example in Directory.GetFiles(Examples))
            {
                File.Copy(example, Path.Combine(directory, Path.GetFileName(example)), overwrite: true);
            }
            string fail = Path.Combine(directory, "fail.sh");
            File.WriteAllText(fail, "#!/bin/sh\necho 'cannot parse line 1' >&2\nexit 3\n");
            File.SetUnixFileMode(fail, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        });
    }

    public byte[] Corpus { get; }

    /// <summary>The streaming WordCount by its programs' paths in the repository, as the reference runs it.</summary>
    public static StreamingJob WordCount(bool combiner) =>
        (StreamingJob)JobRegistry.Create(StreamingJob.Spec(Path.Combine(Examples, "wordcount_mapper.py"), Path.Combine(Examples, "wordcount_reducer.py"),
            combiner ? Path.Combine(Examples, "wordcount_reducer.py") : null));

    private static string Examples
    {
        get
        {
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Camdoop.sln")))
            {
                directory = directory.Parent;
            }
            return Path.Combine(directory?.FullName ?? throw new InvalidOperationException("no directory above the tests holds Camdoop.sln"), "examples", "streaming");
        }
    }
}

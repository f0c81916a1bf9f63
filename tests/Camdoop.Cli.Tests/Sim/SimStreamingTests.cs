using System.Text.Json;
using Camdoop.Cli.Tests.Support;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>
/// `sim run` with a streaming job: the repository's Python WordCount (examples/streaming) against the built-in
/// wordcount over the same file, both checked against the reference, on the torus in both modes and through a switch;
/// and a program that fails, as one line naming the server and the program.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class SimStreamingTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-sim-streaming-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Theory]
    [InlineData("camdoop", true, "--torus", "2x2x3", "--reducers", "3")]
    [InlineData("noagg", false, "--torus", "2x2x2", "--reducers", "8")]
    [InlineData("tcp", true, "--torus", "2x2x3", "--reducers", "2", "--network", "switch")]
    public void APythonWordCountEqualsTheBuiltInWordCountAndTheReference(string mode, bool combiner, params string[] cube)
    {
        string input = Corpus();
        string[] streaming = ["--mapper", "wordcount_mapper.py", "--reducer", "wordcount_reducer.py", "--job-dir", Examples];
        if (combiner)
        {
            streaming = [.. streaming, "--combiner", "wordcount_reducer.py"];
        }
        var programs = Run("streaming", [.. streaming, "--input", input, "--mode", mode, .. cube]);
        var builtIn = Run("builtin", ["--job", "wordcount", "--input", input, "--mode", mode, .. cube]);
        Assert.Equal(builtIn.Keys.Order(StringComparer.Ordinal), programs.Keys.Order(StringComparer.Ordinal));
        foreach (var (part, bytes) in builtIn)
        {
            Assert.True(bytes.Length > 0 || programs[part].Length == 0);
            Assert.True(bytes.AsSpan().SequenceEqual(programs[part]), $"{part} of the streaming job differs from the built-in job's");
        }
    }

    [Fact]
    public void AFailingMapperFailsTheJobInOneLineNamingTheServerAndTheMapper()
    {
        string jobs = Programs(("fail.sh", "echo 'cannot parse line 1' >&2; exit 3"));
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--mapper", "fail.sh", "--reducer", "wordcount_reducer.py", "--job-dir", jobs, "--input", Corpus());
        OneLineError.Assert(result, "failed: mapper 'fail.sh' exited with code 3: cannot parse line 1");
        Assert.Matches(@"the map task of server \d,\d,\d failed: mapper 'fail\.sh'", result.Stderr);
    }

    [Fact]
    public void AReducerThatWritesAKeyOverTheLimitFailsTheJobInOneLine()
    {
        string jobs = Programs(("huge.sh", "cat >/dev/null; head -c 70000 /dev/zero | tr '\\0' k; echo"));
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--mapper", "wordcount_mapper.py", "--reducer", "huge.sh", "--job-dir", jobs, "--input", Corpus());
        Assert.True(result.ExitCode == 1, result.ToString());
        string line = Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries), l => !l.StartsWith("sim run [", StringComparison.Ordinal));
        Assert.Contains("the job did not complete: failed on", line, StringComparison.Ordinal);
        Assert.Contains("reducer 'huge.sh' wrote a 70000-byte key (keys are at most 65536 bytes) (output line 1)", line, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--job", "wordcount", "--mapper", "wordcount_mapper.py", "--reducer", "wordcount_reducer.py")]
    [InlineData("--mapper", "wordcount_mapper.py")]
    [InlineData("--mapper", "../wordcount_mapper.py", "--reducer", "wordcount_reducer.py")]
    public void AStreamingJobNamedWronglyIsAUsageErrorInOneLine(params string[] job)
    {
        var result = CliRunner.Run(["sim", "run", "--torus", "2x2x2", "--job-dir", Examples, "--input", Corpus(), .. job]);
        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }

    private static string Examples => Path.Combine(Repository, "examples", "streaming");

    private static string Repository
    {
        get
        {
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Camdoop.sln")))
            {
                directory = directory.Parent;
            }
            Assert.True(directory is not null, $"no directory above {AppContext.BaseDirectory} holds Camdoop.sln");
            return directory!.FullName;
        }
    }

    /// <summary>A text file of about 100 KB, with non-ASCII words and CRLF lines.</summary>
    private string Corpus()
    {
        string path = Path.Combine(_directory, "corpus.txt");
        if (!File.Exists(path))
        {
            var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 12, BytesPerServer = 8_000, Seed = 17 });
            File.WriteAllBytes(path, [.. Enumerable.Range(0, 12).SelectMany(generator.GenerateServer), .. "Café naïve\r\nX2 x2 don't\n"u8]);
        }
        return path;
    }

    /// <summary>A job directory with the example programs and the given shell scripts.</summary>
    private string Programs(params (string Name, string Body)[] scripts)
    {
        string directory = Path.Combine(_directory, "jobs");
        Directory.CreateDirectory(directory);
        foreach (string example in Directory.GetFiles(Examples))
        {
            File.Copy(example, Path.Combine(directory, Path.GetFileName(example)), overwrite: true);
        }
        foreach (var (name, body) in scripts)
        {
            string path = Path.Combine(directory, name);
            File.WriteAllText(path, $"#!/bin/sh\n{body}\n");
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        }
        return directory;
    }

    /// <summary>`sim run ... --verify --output`: checks it completed and equals the reference; each part's bytes.</summary>
    private Dictionary<string, byte[]> Run(string name, string[] args)
    {
        string output = Path.Combine(_directory, name);
        var (code, stdout, stderr) = CamdoopProcess.Run(["sim", "run", .. args, "--verify", "--output", output, "--json"]);
        Assert.True(code == 0, stderr);
        using var report = JsonDocument.Parse(stdout);
        Assert.True(report.RootElement.GetProperty("verified").GetBoolean(), $"{name}: {stdout}");
        return Directory.GetFiles(output).ToDictionary(path => Path.GetFileName(path), path => File.ReadAllBytes(path));
    }
}

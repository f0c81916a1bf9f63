using System.Text;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.Jobs;

/// <summary>
/// Streaming jobs: the repository's Python WordCount against the built-in one, the map phase's mapper and combiner
/// programs, and what a program that misbehaves does to the job (small shell scripts written for each test).
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class StreamingJobTests : IDisposable
{
    private readonly string _directory = System.IO.Directory.CreateTempSubdirectory("camdoop-streaming-").FullName;

    public void Dispose() => System.IO.Directory.Delete(_directory, recursive: true);

    private static List<byte[]> Corpus(int servers, int bytesPerServer)
    {
        var generator = new TextDataGenerator(servers, bytesPerServer, seed: 21, vocabularySize: 800);
        return [.. Enumerable.Range(0, servers).Select(generator.GenerateServer)];
    }

    private static byte[] Formatted(IMapReduceJob job, List<byte[]> inputs, int reduceTasks)
    {
        var result = ReferenceMapReduce.Run(job, inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), reduceTasks);
        return [.. Enumerable.Range(0, reduceTasks).SelectMany(result.Format)];
    }

    [Theory]
    [InlineData(1, false)]
    [InlineData(3, true)]
    public void ThePythonWordCountGivesTheBuiltInWordCountsOutput(int reduceTasks, bool combiner)
    {
        // Non-ASCII words, CRLF lines and a last line without its newline: the two must split words alike.
        var inputs = Corpus(3, 6_000);
        inputs.Add("Café NAÏVE naïve\r\nx2 X2 don't\nlast line"u8.ToArray());
        var expected = Formatted(new WordCountJob(), inputs, reduceTasks);
        Assert.True(expected.Length > 1000);
        Assert.Equal(Encoding.UTF8.GetString(expected), Encoding.UTF8.GetString(Formatted(StreamingExamples.WordCount(combiner), inputs, reduceTasks)));
    }

    [Fact]
    public void AMapTaskThatSpillsRunsTheCombinerOverEachLoadAndKeepsEveryCount()
    {
        var input = Corpus(1, 12_000)[0];
        // The smallest sort buffer: the mapper's output spills many times, each load through the combiner.
        var output = MapTask.Run(StreamingExamples.WordCount(combiner: true), input, new MapTaskOptions { ReduceTasks = 3, SortBufferBytes = 4096 });
        Assert.True(output.Stats.Spills > 3, $"{output.Stats.Spills} spills");
        var counts = new Dictionary<string, ulong>();
        long records = 0;
        for (int r = 0; r < 3; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                foreach (var record in Rec.Decode(ShufflePipeline.ReadRun(output, r, s)))
                {
                    Assert.Equal((r, s), (((IMapReduceJob)new WordCountJob()).Partition(record.Key, 3), Stripes.Of(record.Key)));
                    string word = Encoding.ASCII.GetString(record.Key);
                    counts[word] = counts.GetValueOrDefault(word) + ulong.Parse(Encoding.ASCII.GetString(record.Value), System.Globalization.CultureInfo.InvariantCulture);
                    records++;
                }
            }
        }
        var builtIn = MapTask.Run(new WordCountJob(), input, new MapTaskOptions { ReduceTasks = 3 });
        Assert.Equal(builtIn.Stats.MapOutputRecords, output.Stats.MapOutputRecords);
        var expected = new Dictionary<string, ulong>();
        for (int r = 0; r < 3; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                foreach (var record in Rec.Decode(ShufflePipeline.ReadRun(builtIn, r, s)))
                {
                    expected[Encoding.ASCII.GetString(record.Key)] = CounterValues.Read(record.Value);
                }
            }
        }
        Assert.Equal(expected.OrderBy(p => p.Key, StringComparer.Ordinal), counts.OrderBy(p => p.Key, StringComparer.Ordinal));
        // Combined per load: far fewer records than the mapper wrote, a word at most once per spill and the last load.
        Assert.InRange(records, expected.Count, (long)expected.Count * (output.Stats.Spills + 1));
    }

    [Fact]
    public void LinesBecomeRecordsAsHadoopStreamingReadsThem()
    {
        // key TAB value; a line without a TAB is a key with an empty value; the value keeps later TABs; CR is dropped;
        // a last line without its newline still counts.
        var records = RunScript("printf 'a\\t1\\nalone\\nb\\tx\\ty\\r\\n\\tempty key\\nlast\\t2'");
        Assert.Equal(["a|1", "alone|", "b|x\ty", "|empty key", "last|2"], records.Select(r => $"{r.Key}|{r.Value}"));
    }

    [Theory]
    [InlineData("echo 'bad input on line 7' >&2; echo 'more' >&2; exit 3", "mapper 'program.sh' exited with code 3: bad input on line 7")]
    [InlineData("exit 2", "mapper 'program.sh' exited with code 2 (nothing on its standard error)")]
    [InlineData("printf 'ok\\t1\\nk\\t\\377\\n'", "mapper 'program.sh' wrote a line that is not UTF-8 (output line 2)")]
    [InlineData("head -c 70000 /dev/zero | tr '\\0' k; echo", "mapper 'program.sh' wrote a 70000-byte key (keys are at most 65536 bytes) (output line 1)")]
    [InlineData("head -c 1200000 /dev/zero | tr '\\0' v", "mapper 'program.sh' wrote a line of more than")]
    [InlineData("head -c 1 >/dev/null; exit 0", "mapper 'program.sh' exited before reading all of its input")]
    public void AProgramThatFailsOrWritesSomethingElseThanRecordsFailsInOneLine(string script, string expected)
    {
        var error = Assert.Throws<StreamingCommandException>(() => RunScript(script, input: new byte[4 << 20]));
        Assert.StartsWith(expected, error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', error.Message);
    }

    [Fact]
    public void AProgramThatCannotStartOrRunSaysWhy()
    {
        string missing = Script("interpreter.sh", "exit 0", interpreter: "#!/no/such/interpreter");
        var error = Assert.Throws<StreamingCommandException>(() => StreamingProcess.Run(StreamingJob.AtPath("mapper", missing), _ => { }, new Discard()));
        Assert.Equal("mapper 'interpreter.sh' could not be started: it, or the interpreter its #! line names, does not exist", error.Message);

        string plain = Path.Combine(_directory, "plain.sh");
        File.WriteAllText(plain, "#!/bin/sh\n");
        Assert.Contains("mapper 'plain.sh' is not executable", Assert.Throws<JobLoadException>(() => StreamingJob.AtPath("mapper", plain)).Message, StringComparison.Ordinal);
        Assert.Equal($"reducer 'none.sh' is not in {_directory}", Assert.Throws<JobLoadException>(() => StreamingJob.AtPath("reducer", Path.Combine(_directory, "none.sh"))).Message);
    }

    [Fact]
    public void AFeedThatFailsFailsTheRunWithItsOwnError()
    {
        string cat = Script("cat.sh", "cat");
        var error = Assert.Throws<InvalidDataException>(() => StreamingProcess.Run(StreamingJob.AtPath("mapper", cat), stdin =>
        {
            stdin.Write("a\t1\n"u8);
            throw new InvalidDataException("a line of the input is too long");
        }, new Discard()));
        Assert.Equal("a line of the input is too long", error.Message);
    }

    [Fact]
    public void AJobTextNamesItsProgramsAndRefusesWhatItCannotCarry()
    {
        Assert.Equal("streaming?combiner=c.py&mapper=m.py&reducer=r.py", StreamingJob.Spec("m.py", "r.py", "c.py").ToString());
        Assert.Equal("streaming?mapper=m.py&reducer=r.py", StreamingJob.Spec("m.py", "r.py").ToString());
        Assert.Contains("without '&'", Assert.Throws<JobLoadException>(() => StreamingJob.Spec("a&b.py", "r.py")).Message, StringComparison.Ordinal);
        Assert.Contains("needs a mapper and a reducer", Assert.Throws<JobLoadException>(() => JobRegistry.Create("streaming?mapper=m.py")).Message, StringComparison.Ordinal);
        Assert.Contains("not 'shell'", Assert.Throws<JobLoadException>(() => JobRegistry.Create("streaming?mapper=m.py&reducer=r.py&shell=x")).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AServerRunsOnlyProgramsOfItsJobDirectoryNamedByFileName()
    {
        string allowed = Path.Combine(_directory, "allowed");
        string outside = Path.Combine(_directory, "outside");
        System.IO.Directory.CreateDirectory(allowed);
        System.IO.Directory.CreateDirectory(outside);
        foreach (string directory in new[] { allowed, outside })
        {
            foreach (string name in new[] { "wordcount_mapper.py", "wordcount_reducer.py" })
            {
                File.Copy(Path.Combine(StreamingExamples.Directory, name), Path.Combine(directory, name));
            }
        }
        File.CreateSymbolicLink(Path.Combine(allowed, "escape.py"), Path.Combine(outside, "wordcount_mapper.py"));
        File.CreateSymbolicLink(Path.Combine(allowed, "alias.py"), Path.Combine(allowed, "wordcount_mapper.py"));
        var catalog = JobCatalog.ForServer(allowed);

        var job = Assert.IsType<StreamingJob>(catalog.Create(StreamingJob.Spec("alias.py", "wordcount_reducer.py", "wordcount_reducer.py")));
        Assert.Equal(("mapper", "alias.py", Path.Combine(allowed, "wordcount_mapper.py")), (job.Mapper.Role, job.Mapper.Name, job.Mapper.Path));
        Assert.Equal(Path.Combine(allowed, "wordcount_reducer.py"), job.Combiner!.Path);

        foreach (var (mapper, reason) in new[]
        {
            (Path.Combine(outside, "wordcount_mapper.py"), "by its file name alone"),
            ("../outside/wordcount_mapper.py", "by its file name alone"),
            ("/bin/sh", "by its file name alone"),
            ("escape.py", "a link leading out of the job assembly directory"),
            ("other.py", "is not in this server's job assembly directory"),
        })
        {
            var refused = Assert.Throws<JobLoadException>(() => catalog.Create(StreamingJob.Spec(mapper, "wordcount_reducer.py")));
            Assert.Contains(reason, refused.Message, StringComparison.Ordinal);
            Assert.StartsWith($"mapper '{mapper}'", refused.Message, StringComparison.Ordinal);
        }
        Assert.Contains("runs no job programs", Assert.Throws<JobLoadException>(() =>
            JobCatalog.BuiltInOnly.Create(StreamingJob.Spec("wordcount_mapper.py", "wordcount_reducer.py"))).Message, StringComparison.Ordinal);
        // A process that runs its own user's code takes paths.
        Assert.IsType<StreamingJob>(JobCatalog.AnyPath.Create(StreamingJob.Spec(Path.Combine(outside, "wordcount_mapper.py"), Path.Combine(outside, "wordcount_reducer.py"))));
    }

    /// <summary>Runs a shell script as a mapper over <paramref name="input"/>; its records as text.</summary>
    private List<(string Key, string Value)> RunScript(string body, byte[]? input = null)
    {
        var output = new Collect();
        StreamingProcess.Run(StreamingJob.AtPath("mapper", Script("program.sh", body)), stdin => stdin.Write(input ?? []), output);
        return output.Records;
    }

    private string Script(string name, string body, string interpreter = "#!/bin/sh")
    {
        string path = Path.Combine(_directory, name);
        File.WriteAllText(path, $"{interpreter}\n{body}\n");
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return path;
    }

    private sealed class Collect : IRecordEmitter
    {
        public List<(string Key, string Value)> Records { get; } = [];

        public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Records.Add((Encoding.UTF8.GetString(key), Encoding.UTF8.GetString(value)));
    }

    private sealed class Discard : IRecordEmitter
    {
        public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
        {
        }
    }
}

using System.Text.Json;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// Streaming jobs on the emulated testbed: the repository's Python WordCount installed in the nodes' job assembly
/// directory gives the built-in wordcount's output, which equals the single-process reference, in every mode; a
/// failing mapper fails the job in one line naming the server and the mapper; a program named by a path is refused.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class StreamingTestbedTests(StreamingCube cube) : IClassFixture<StreamingCube>
{
    [RootTheory]
    [InlineData("camdoop", 2, true)]
    [InlineData("noagg", 8, false)]
    [InlineData("tcp", 3, true)]
    public void APythonWordCountEqualsTheBuiltInWordCountAndTheReference(string mode, int reducers, bool combiner)
    {
        string[] programs = ["--mapper", "wordcount_mapper.py", "--reducer", "wordcount_reducer.py"];
        if (combiner)
        {
            programs = [.. programs, "--combiner", "wordcount_reducer.py"];
        }
        string streaming = Done(cube.Cli(["submit", .. programs, "--input", "corpus", "--reducers", $"{reducers}", "--mode", mode, "--wait", "--json"]));
        string builtIn = Done(cube.Cli("submit", "--job", "wordcount", "--input", "corpus", "--reducers", $"{reducers}", "--mode", mode, "--wait", "--json"));
        cube.AssertOutputIsTheReference(builtIn, new WordCountJob(), cube.Corpus, reducers);
        cube.AssertOutputIsTheReference(streaming, new WordCountJob(), cube.Corpus, reducers);
        cube.AssertOutputIsTheReference(streaming, StreamingCube.WordCount(combiner), cube.Corpus, reducers);
    }

    [RootFact]
    public void AFailingMapperFailsTheJobInOneLineNamingTheServerAndTheMapper()
    {
        var result = cube.Cli("submit", "--mapper", "fail.sh", "--reducer", "wordcount_reducer.py", "--input", "corpus", "--wait");
        OneLineError.Assert(result, "failed: mapper 'fail.sh' exited with code 3: cannot parse line 1");
        Assert.Matches(@"the map task of server \d,\d,\d failed: mapper 'fail\.sh'", result.Stderr);
        Assert.All(cube.State.Servers, s => Assert.Equal("running", cube.NodeStatusOf(s.Coordinate).State));
    }

    [RootFact]
    public void AProgramNamedByAPathOrMissingIsRefusedInOneLine()
    {
        OneLineError.Assert(cube.Cli("submit", "--mapper", "/bin/sh", "--reducer", "wordcount_reducer.py", "--input", "corpus"),
            "mapper '/bin/sh' refused: name a file of the servers' job assembly directory by its file name alone");
        OneLineError.Assert(cube.Cli("submit", "--mapper", "wordcount_mapper.py", "--reducer", "no_such_reducer.py", "--input", "corpus"),
            "reducer 'no_such_reducer.py' is not in this server's job assembly directory");
    }

    private static string Done(CliResult submit)
    {
        Assert.True(submit.ExitCode == 0, submit.ToString());
        using var json = JsonDocument.Parse(submit.Stdout);
        Assert.Equal("done", json.RootElement.GetProperty("state").GetString());
        return json.RootElement.GetProperty("jobId").GetString()!;
    }
}

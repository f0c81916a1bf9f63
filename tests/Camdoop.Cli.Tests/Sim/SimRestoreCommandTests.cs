namespace Camdoop.Cli.Tests.Sim;

public sealed class SimRestoreCommandTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("camdoop-sim-restore-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void ALostServersChunksGetThreeGoodReplicasAgainAndTheirFilesAreDeletedAfter()
    {
        string data = Directory.CreateDirectory(Path.Combine(_dir, "data")).FullName;
        string outDir = Path.Combine(_dir, "out");
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "restore", "--torus", "3x3x3", "--lost", "1,1,1", "--held", "4MB", "--chunk-size", "512KB", "--rates", "0",
            "--grace", "1s", "--data-root", data, "--out", outDir);
        Assert.True(code == 0, stdout + stderr);
        var lines = File.ReadAllLines(Path.Combine(outDir, "restore.csv"));
        Assert.Equal(2, lines.Length);
        var header = lines[0].Split(',');
        // The lost server's coordinate is quoted ("(1,1,1)"): split the row after it.
        var row = lines[1][(lines[1].LastIndexOf('"') + 2)..].Split(',');
        string Field(string name) => row[Array.IndexOf(header, name) - 2];
        Assert.Equal("8", Field("chunks"));
        Assert.Equal("4194304", Field("held_bytes"));
        // Every chunk: three live replicas where it is placed without the lost server, each with the right checksum.
        Assert.Equal("8", Field("good_chunks"));
        Assert.Equal("1", Field("restored"));
        Assert.True(double.Parse(Field("copy_s"), System.Globalization.CultureInfo.InvariantCulture) > 0);
        Assert.True(File.Exists(Path.Combine(outDir, "restore.svg")));
        Assert.True(File.Exists(Path.Combine(outDir, "restore.png")));
        Assert.False(Directory.EnumerateFiles(data, "*", SearchOption.AllDirectories).Any(), "the chunk files are left behind");
    }

    [Fact]
    public void BadArgumentsAreOneLineAndNonZero()
    {
        var (code, _, stderr) = CamdoopProcess.Run("sim", "restore", "--torus", "3x3x3", "--lost", "5,5,5");
        Assert.NotEqual(0, code);
        Assert.Contains("--lost", stderr, StringComparison.Ordinal);
        Assert.Single(stderr.Trim().Split('\n'));
    }
}

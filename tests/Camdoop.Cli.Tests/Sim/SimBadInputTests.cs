using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>
/// `sim run` on input its job cannot read: a word longer than a key may be, records cut short, binary garbage.
/// Each is one clear line on stderr and exit 1, never an unhandled exception.
/// </summary>
public sealed class SimBadInputTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-bad-input-").FullName;

    [Fact]
    public void AWordLongerThanAKeyIsOneLine()
    {
        string path = Write("word.txt", [.. Enumerable.Repeat((byte)'a', 3 << 20), (byte)'\n']);
        OneLineError.Assert(SimRun("wordcount", path), "wordcount map produced a record with a 3145728-byte key");
    }

    [Fact]
    public void AFileOfPartialSortRecordsIsRefusedBeforeAnythingRuns()
    {
        string path = Write("records.bin", Random(1_050));
        OneLineError.Assert(SimRun("sort", path), "is 1,050 bytes, not a whole number of 100-byte records (sort reads 100-byte records)");
    }

    [Fact]
    public void AServerFileEndingInAPartialRecordNamesTheServer()
    {
        string directory = Path.Combine(_directory, "servers");
        Directory.CreateDirectory(directory);
        File.WriteAllBytes(Path.Combine(directory, "server-00000.input"), Random(200));
        File.WriteAllBytes(Path.Combine(directory, "server-00001.input"), Random(250));
        OneLineError.Assert(SimRun("sort", directory), "the map task of server 0,0,1 failed: input ends with a partial record: 50 bytes after 2 whole 100-byte records");
    }

    [Fact]
    public void BinaryGarbageIsOneLineForTextJobsAndForSort()
    {
        // No line break in 17 MiB: one line longer than any a text job reads.
        var garbage = Random((17 << 20) + 3);
        for (int i = 0; i < garbage.Length; i++)
        {
            if (garbage[i] == '\n')
            {
                garbage[i] = 0;
            }
        }
        string path = Write("garbage.bin", garbage);
        OneLineError.Assert(SimRun("wordcount", path), "input line 1 is longer than 16777216 bytes");
        OneLineError.Assert(SimRun("sort", path), "not a whole number of 100-byte records");
    }

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static CliResult SimRun(string job, string input) =>
        CliRunner.Run("sim", "run", "--torus", "2x2x2", "--job", job, "--input", input, "--force");

    private string Write(string name, byte[] bytes)
    {
        string path = Path.Combine(_directory, name);
        File.WriteAllBytes(path, bytes);
        return path;
    }

    private static byte[] Random(int length)
    {
        var bytes = new byte[length];
        new Random(length).NextBytes(bytes);
        return bytes;
    }
}

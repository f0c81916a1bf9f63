using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Fuzz;

// Input a job cannot read, given to the cube: refused up front where the dataset's format shows it, else the job
// fails with its reason; either way one line and exit 1 from the client, and every node stays up.
public sealed partial class FrontDoorTestbedTests
{
    [RootFact]
    public void ADatasetWhoseFormatCannotFeedTheJobIsRefusedAtSubmit()
    {
        OneLineError.Assert(cube.Cli("submit", "--job", "sort", "--input", "corpus", "--wait"),
            "dataset 'corpus' holds text lines but sort reads 100-byte records; store its input with 'camdoop put --format records100'");

        string records = cube.Write("records.bin", RandomBytes(5_000));
        Assert.Equal(0, cube.Cli("put", records, "--name", "records", "--format", "records100").ExitCode);
        OneLineError.Assert(cube.Cli("submit", "--job", "wordcount", "--input", "records"),
            "dataset 'records' holds 100-byte records but wordcount reads text lines; store its input with 'camdoop put --format text'");
    }

    [RootFact]
    public void PartialFixedSizeRecordsAreRefusedAtPut()
    {
        string partial = cube.Write("partial.bin", RandomBytes(1_050));
        OneLineError.Assert(cube.Cli("put", partial, "--name", "partial", "--format", "records100"),
            "not a whole number of 100-byte records");
    }

    [RootFact]
    public void AnOverLongRecordFailsTheJobInOneLineAndTheCubeStaysUp()
    {
        string word = cube.Write("word.txt", [.. Enumerable.Repeat((byte)'a', 3 << 20), (byte)'\n']);
        Assert.Equal(0, cube.Cli("put", word, "--name", "word").ExitCode);
        OneLineError.Assert(cube.Cli("submit", "--job", "wordcount", "--input", "word", "--wait"),
            "wordcount map produced a record with a 3145728-byte key");
        cube.AssertEveryServerRuns();
    }

    [RootFact]
    public void BinaryGarbageFailsTheJobInOneLineAndTheCubeStaysUp()
    {
        // 17 MiB without a line break: one line longer than a map task reads.
        var garbage = RandomBytes((17 << 20) + 3);
        garbage.AsSpan().Replace((byte)'\n', (byte)0);
        string path = cube.Write("garbage.bin", garbage);
        var put = cube.Cli("put", path, "--name", "garbage");
        Assert.True(put.ExitCode == 0, put.ToString());
        OneLineError.Assert(cube.Cli("submit", "--job", "wordcount", "--input", "garbage", "--wait"),
            "longer than 16777216 bytes");
        cube.AssertEveryServerRuns();
    }

    private static byte[] RandomBytes(int length)
    {
        var bytes = new byte[length];
        new Random(length).NextBytes(bytes);
        return bytes;
    }
}

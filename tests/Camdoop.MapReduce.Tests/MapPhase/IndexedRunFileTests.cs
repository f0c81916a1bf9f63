using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Tests.MapPhase;

public sealed class IndexedRunFileTests : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "camdoop-idx-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    private (MapOutput Disk, MapOutput Memory) MapBoth(int reduceTasks)
    {
        var job = new SyntheticJob();
        var input = new SyntheticDataGenerator(4, 0.5, 6_000, 3).GenerateServer(1);
        var disk = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = reduceTasks, OutputDirectory = _directory, MapTaskId = 9 });
        var memory = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = reduceTasks, MapTaskId = 9 });
        return (disk, memory);
    }

    [Fact]
    public void SegmentsReadBackExactlyAsTheInMemoryRuns()
    {
        var (disk, memory) = MapBoth(4);
        using (disk)
        {
            for (int r = 0; r < 4; r++)
            {
                for (int s = 0; s < Stripes.Count; s++)
                {
                    using var reader = disk.OpenRun(r, s);
                    var bytes = new byte[reader.Remaining];
                    int offset = 0;
                    int n;
                    // Odd block size: reads straddle records.
                    while ((n = reader.Read(bytes.AsSpan(offset, Math.Min(37, bytes.Length - offset)))) > 0)
                    {
                        offset += n;
                    }
                    Assert.True(reader.IsAtEnd);
                    Assert.Equal(memory.Payload(r, s).ToArray(), bytes);
                    Assert.Equal(memory.Header(r, s), disk.Header(r, s));
                }
            }
        }
    }

    [Fact]
    public void CorruptPayloadIsDetectedWhenTheSegmentIsRead()
    {
        var (disk, _) = MapBoth(2);
        string path = disk.RunFilePath!;
        disk.Dispose();
        using (var file = IndexedRunFile.Open(path))
        {
            // Flip a byte in the middle of the first non-empty payload.
            int bucket = Enumerable.Range(0, file.Buckets).First(b => file.Header(b).PayloadBytes > 10);
            long at = file.PayloadOffset(bucket) + (file.Header(bucket).PayloadBytes / 2);
            var bytes = File.ReadAllBytes(path);
            bytes[at] ^= 0x40;
            File.WriteAllBytes(path, bytes);
        }
        using var reopened = IndexedRunFile.Open(path);
        var error = Assert.Throws<CorruptRunFileException>(() =>
        {
            for (int b = 0; b < reopened.Buckets; b++)
            {
                reopened.OpenSegment(b).VerifyToEnd();
            }
        });
        Assert.Contains("checksum", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("truncate")]
    [InlineData("trailer")]
    [InlineData("index")]
    [InlineData("header")]
    public void DamagedStructureIsRejectedOnOpen(string damage)
    {
        var (disk, _) = MapBoth(2);
        string path = disk.RunFilePath!;
        disk.Dispose();
        var bytes = File.ReadAllBytes(path);
        switch (damage)
        {
            case "truncate":
                bytes = bytes[..^3];
                break;
            case "trailer":
                bytes[^20] ^= 1;
                break;
            case "index":
                bytes[^(IndexedRunFile.TrailerSize + 4)] ^= 1;
                break;
            default:
                bytes[30] ^= 1; // inside the first segment's run header
                break;
        }
        File.WriteAllBytes(path, bytes);
        Assert.Throws<CorruptRunFileException>(() => IndexedRunFile.Open(path).Dispose());
    }
}

using System.Buffers.Binary;
using System.Globalization;
using System.Text;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

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

    [Fact]
    public void IndexAndTrailerHaveTheDocumentedBinaryLayout()
    {
        const int reduceTasks = 2;
        const int buckets = reduceTasks * 6;
        var (disk, memory) = MapBoth(reduceTasks);
        string path = disk.RunFilePath!;
        disk.Dispose();
        var bytes = File.ReadAllBytes(path);

        // The runs back to back, each a 96-byte header (magic "CDRN", version 2) and its payload; the bucket offsets
        // come from the in-memory runs, not from the file.
        var index = new StringBuilder();
        long offset = 0;
        for (int b = 0; b < buckets; b++)
        {
            Assert.Equal("4344524E0002", Convert.ToHexString(bytes, (int)offset, 6));
            index.Append(offset.ToString("X16", CultureInfo.InvariantCulture));
            offset += 96 + memory.Payload(b / 6, b % 6).Length;
        }
        long indexOffset = offset;
        Assert.Equal(indexOffset + (8 * buckets) + 40, bytes.Length);

        // Index: one big-endian i64 per bucket. Trailer, 40 bytes, big-endian: magic "CDIX", version 2, reserved 0,
        // buckets, reduce tasks, index offset, xxHash64 of the index, xxHash64 of trailer bytes 0..31.
        Assert.Equal(index.ToString(), Convert.ToHexString(bytes, (int)indexOffset, 8 * buckets));
        string trailer32 = "43444958" + "0002" + "0000" + buckets.ToString("X8", CultureInfo.InvariantCulture)
            + reduceTasks.ToString("X8", CultureInfo.InvariantCulture) + indexOffset.ToString("X16", CultureInfo.InvariantCulture)
            + XxHash64.Hash(Convert.FromHexString(index.ToString())).ToString("X16", CultureInfo.InvariantCulture);
        string trailer = trailer32 + XxHash64.Hash(Convert.FromHexString(trailer32)).ToString("X16", CultureInfo.InvariantCulture);
        Assert.Equal(trailer, Convert.ToHexString(bytes, bytes.Length - 40, 40));
    }

    [Fact]
    public void AVersion1LittleEndianFileIsRefusedWithAClearError()
    {
        var (disk, _) = MapBoth(2);
        string path = disk.RunFilePath!;
        disk.Dispose();
        var bytes = File.ReadAllBytes(path);

        // Version 1: the same index and trailer little-endian, under the same magic bytes "CDIX".
        const int buckets = 12;
        long indexOffset = bytes.Length - 40 - (8 * buckets);
        var index = bytes.AsSpan((int)indexOffset, 8 * buckets);
        for (int b = 0; b < buckets; b++)
        {
            BinaryPrimitives.WriteInt64LittleEndian(index[(8 * b)..], BinaryPrimitives.ReadInt64BigEndian(index[(8 * b)..]));
        }
        var trailer = bytes.AsSpan(bytes.Length - 40);
        trailer.Clear();
        "CDIX"u8.CopyTo(trailer);
        BinaryPrimitives.WriteUInt16LittleEndian(trailer[4..], 1);
        BinaryPrimitives.WriteInt32LittleEndian(trailer[8..], buckets);
        BinaryPrimitives.WriteInt32LittleEndian(trailer[12..], 2);
        BinaryPrimitives.WriteInt64LittleEndian(trailer[16..], indexOffset);
        BinaryPrimitives.WriteUInt64LittleEndian(trailer[24..], XxHash64.Hash(index));
        BinaryPrimitives.WriteUInt64LittleEndian(trailer[32..], XxHash64.Hash(trailer[..32]));
        File.WriteAllBytes(path, bytes);

        var error = Assert.Throws<CorruptRunFileException>(() => IndexedRunFile.Open(path).Dispose());
        Assert.Contains("version 1", error.Message, StringComparison.Ordinal);
        Assert.Contains("little-endian", error.Message, StringComparison.Ordinal);
    }
}

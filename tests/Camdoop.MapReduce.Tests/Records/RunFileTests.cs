using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.Records;

public sealed class RunFileTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-run-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private string WriteRun(List<Rec> records, out RunHeader header)
    {
        string path = Path.Combine(_directory, "r00000-s3.run");
        using var writer = new RunFileWriter(path, jobId: 0xABCDEF, mapTaskId: 42, reduceTask: 0, stripe: 3, combined: true, bufferBytes: 256);
        foreach (var r in records)
        {
            writer.Write(r.Key, r.Value);
        }
        header = writer.Complete();
        return path;
    }

    private static List<Rec> Sample(int count) =>
        Enumerable.Range(0, count).Select(i => Rec.Of($"key{i:D6}", (ulong)i)).Append(new Rec(new byte[10], new byte[2000])).ToList();

    [Fact]
    public void RoundTripsBlockByBlock()
    {
        var records = Sample(500);
        string path = WriteRun(records, out var written);
        using var reader = RunReader.Open(path);
        Assert.Equal(written, reader.Header);
        Assert.Equal((0xABCDEFUL, 42UL, 0, 3, 501L, true), (reader.Header.JobId, reader.Header.MapTaskId, reader.Header.ReduceTask, reader.Header.Stripe, reader.Header.RecordCount, reader.Header.Combined));
        Assert.Equal(records.Sum(r => (long)r.Key.Length), reader.Header.KeyBytes);
        Assert.Equal(records.Sum(r => (long)r.Value.Length), reader.Header.ValueBytes);
        var parser = new RecordStreamReader(64);
        var got = new List<Rec>();
        var block = new byte[333];
        int n;
        while ((n = reader.Read(block)) > 0)
        {
            parser.Append(block.AsSpan(0, n));
            while (parser.TryRead(out var k, out var v))
            {
                got.Add(new Rec(k.ToArray(), v.ToArray()));
            }
        }
        parser.Complete();
        Assert.True(reader.IsAtEnd);
        Assert.Equal(records, got);
        Assert.Equal(written, RunReader.Verify(path));
    }

    [Fact]
    public void FlippedPayloadByteIsDetectedByTheChecksum()
    {
        string path = WriteRun(Sample(100), out _);
        var bytes = File.ReadAllBytes(path);
        bytes[RunHeader.Size + 50] ^= 0x10;
        File.WriteAllBytes(path, bytes);
        var error = Assert.Throws<CorruptRunFileException>(() => RunReader.Verify(path));
        Assert.Contains("payload checksum mismatch", error.Message, StringComparison.Ordinal);
        Assert.Equal(path, error.FilePath);
        Assert.Throws<CorruptRunFileException>(() => RunReader.Open(path, verify: true));
    }

    [Fact]
    public void DamagedHeaderAndTruncatedFileAreDetected()
    {
        string path = WriteRun(Sample(100), out _);
        var good = File.ReadAllBytes(path);

        var header = (byte[])good.Clone();
        header[33] ^= 1; // record count
        File.WriteAllBytes(path, header);
        Assert.Contains("header checksum", Assert.Throws<CorruptRunFileException>(() => RunReader.Open(path)).Message, StringComparison.Ordinal);

        var magic = (byte[])good.Clone();
        magic[0] = (byte)'X';
        File.WriteAllBytes(path, magic);
        Assert.Contains("bad magic", Assert.Throws<CorruptRunFileException>(() => RunReader.Open(path)).Message, StringComparison.Ordinal);

        File.WriteAllBytes(path, good[..^10]);
        Assert.Contains("payload bytes", Assert.Throws<CorruptRunFileException>(() => RunReader.Open(path)).Message, StringComparison.Ordinal);

        File.WriteAllBytes(path, good[..40]);
        Assert.Throws<CorruptRunFileException>(() => RunReader.Open(path));
    }

    [Theory]
    [InlineData("key000250", 252)]
    [InlineData("key000250x", 252)]
    [InlineData("a", 1)]
    [InlineData("zzz", 501)]
    public void SkipThroughResumesAfterTheLastKey(string lastKey, int skippedExpected)
    {
        // Sorted: the all-zero 10-byte key first, then key000000 .. key000499.
        var records = Sample(500);
        records.Sort(Rec.CompareKeyValue);
        string path = WriteRun(records, out _);
        using var reader = RunReader.Open(path);
        long skipped = reader.SkipThrough(System.Text.Encoding.ASCII.GetBytes(lastKey));
        Assert.Equal(skippedExpected, skipped);
        var rest = new MemoryStream();
        var block = new byte[97];
        int n;
        while ((n = reader.Read(block)) > 0)
        {
            rest.Write(block, 0, n);
        }
        Assert.True(reader.IsAtEnd);
        Assert.Equal(records.Skip((int)skipped).ToList(), Rec.Decode(rest.ToArray()));
        Assert.Throws<InvalidOperationException>(() => reader.SkipThrough([1]));
    }

    [Fact]
    public void AbandonedWriterLeavesNoFile()
    {
        string path = Path.Combine(_directory, "abandoned.run");
        using (var writer = new RunFileWriter(path, 1, 1, 0, 0, false))
        {
            writer.Write([1, 2], [3]);
        }
        Assert.False(File.Exists(path));
    }

    [Fact]
    public void MemoryRunCheckedAgainstItsHeader()
    {
        var payload = Rec.Encode(Sample(10));
        var header = new RunHeader(1, 2, 0, 1, 11, payload.Length, 0, 0, XxHash64.Hash(payload), false);
        using (var reader = RunReader.FromMemory(header, payload))
        {
            var buffer = new byte[payload.Length];
            Assert.Equal(payload.Length, reader.Read(buffer));
            Assert.Equal(payload, buffer);
        }
        var bad = header with { PayloadChecksum = header.PayloadChecksum + 1 };
        using var badReader = RunReader.FromMemory(bad, payload);
        Assert.Throws<CorruptRunFileException>(() => badReader.Read(new byte[payload.Length]));
    }
}

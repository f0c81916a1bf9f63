using System.Buffers.Binary;
using System.Globalization;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Tests.Support;
using Camdoop.Records;

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

    private static readonly RunHeader LayoutSample = new(
        JobId: 0x0102_0304_0506_0708,
        MapTaskId: 0x1112_1314_1516_1718,
        ReduceTask: 0x2122_2324,
        Stripe: 5,
        RecordCount: 0x3132_3334_3536_3738,
        PayloadBytes: 0x4142_4344_4546_4748,
        KeyBytes: 0x5152_5354_5556_5758,
        ValueBytes: 0x6162_6364_6566_6768,
        PayloadChecksum: 0xF1F2_F3F4_F5F6_F7F8,
        Combined: true);

    [Fact]
    public void TheHeaderHasTheDocumentedBinaryLayout()
    {
        // The 96 bytes written out field by field, all big-endian (every field distinct, so a swapped byte shows):
        // magic "CDRN", version 2, header length 96, job id, map task id, reduce task, stripe, record count, payload
        // bytes, key bytes, value bytes, payload checksum, flags (bit 0: combined), 12 reserved zero bytes, then the
        // xxHash64 of bytes 0..87.
        string first88 = "4344524E" + "0002" + "0060" + "0102030405060708" + "1112131415161718" + "21222324" + "00000005"
            + "3132333435363738" + "4142434445464748" + "5152535455565758" + "6162636465666768" + "F1F2F3F4F5F6F7F8"
            + "00000001" + "00000000" + "0000000000000000";
        string expected = first88 + XxHash64.Hash(Convert.FromHexString(first88)).ToString("X16", CultureInfo.InvariantCulture);

        var bytes = new byte[RunHeader.Size];
        LayoutSample.Write(bytes);
        Assert.Equal(expected, Convert.ToHexString(bytes));
        Assert.Equal(LayoutSample, RunHeader.Read(Convert.FromHexString(expected), "expected"));
    }

    [Fact]
    public void AVersion1LittleEndianHeaderIsRefusedWithAClearError()
    {
        // Version 1: the same fields little-endian, checksums included, under the same magic bytes "CDRN".
        var old = new byte[RunHeader.Size];
        "CDRN"u8.CopyTo(old);
        BinaryPrimitives.WriteUInt16LittleEndian(old.AsSpan(4), 1);
        BinaryPrimitives.WriteUInt16LittleEndian(old.AsSpan(6), RunHeader.Size);
        BinaryPrimitives.WriteUInt64LittleEndian(old.AsSpan(8), LayoutSample.JobId);
        BinaryPrimitives.WriteUInt64LittleEndian(old.AsSpan(16), LayoutSample.MapTaskId);
        BinaryPrimitives.WriteInt32LittleEndian(old.AsSpan(24), LayoutSample.ReduceTask);
        BinaryPrimitives.WriteInt32LittleEndian(old.AsSpan(28), LayoutSample.Stripe);
        BinaryPrimitives.WriteInt64LittleEndian(old.AsSpan(32), LayoutSample.RecordCount);
        BinaryPrimitives.WriteInt64LittleEndian(old.AsSpan(40), LayoutSample.PayloadBytes);
        BinaryPrimitives.WriteInt64LittleEndian(old.AsSpan(48), LayoutSample.KeyBytes);
        BinaryPrimitives.WriteInt64LittleEndian(old.AsSpan(56), LayoutSample.ValueBytes);
        BinaryPrimitives.WriteUInt64LittleEndian(old.AsSpan(64), LayoutSample.PayloadChecksum);
        BinaryPrimitives.WriteUInt32LittleEndian(old.AsSpan(72), 1);
        BinaryPrimitives.WriteUInt64LittleEndian(old.AsSpan(88), XxHash64.Hash(old.AsSpan(0, 88)));
        var error = Assert.Throws<CorruptRunFileException>(() => RunHeader.Read(old, "old.run"));
        Assert.Contains("version 1", error.Message, StringComparison.Ordinal);
        Assert.Contains("little-endian", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(75)] // an unknown flag bit
    [InlineData(76)]
    [InlineData(87)]
    public void NonZeroReservedBytesAreRefused(int offset)
    {
        var bytes = new byte[RunHeader.Size];
        LayoutSample.Write(bytes);
        bytes[offset] |= 0x02;
        BinaryPrimitives.WriteUInt64BigEndian(bytes.AsSpan(88), XxHash64.Hash(bytes.AsSpan(0, 88)));
        var error = Assert.Throws<CorruptRunFileException>(() => RunHeader.Read(bytes, "reserved.run"));
        Assert.Contains("reserved", error.Message, StringComparison.Ordinal);
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

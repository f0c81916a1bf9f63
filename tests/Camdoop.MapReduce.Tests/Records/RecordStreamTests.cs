using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Tests.Support;
using Camdoop.Records;

namespace Camdoop.MapReduce.Tests.Records;

public class RecordStreamTests
{
    private static List<Rec> RandomRecords(Random random, int count)
    {
        var list = new List<Rec>();
        for (int i = 0; i < count; i++)
        {
            // Mostly short, sometimes over 127 and over 16383 bytes so every varint width appears.
            int keyLength = random.Next(10) switch { 0 => random.Next(128, 400), 1 => 0, _ => random.Next(1, 30) };
            int valueLength = random.Next(20) switch { 0 => random.Next(16_384, 20_000), 1 => random.Next(128, 300), 2 => 0, _ => random.Next(1, 12) };
            var key = new byte[keyLength];
            var value = new byte[valueLength];
            random.NextBytes(key);
            random.NextBytes(value);
            list.Add(new Rec(key, value));
        }
        return list;
    }

    [Fact]
    public void RoundTripsThroughEveryTwoWaySplit()
    {
        var random = new Random(1);
        var records = RandomRecords(random, 12).Where(r => r.Value.Length < 1000).ToList();
        var stream = Rec.Encode(records);
        for (int split = 0; split <= stream.Length; split++)
        {
            var reader = new RecordStreamReader(32);
            var got = new List<Rec>();
            reader.Append(stream.AsSpan(0, split));
            while (reader.TryRead(out var k, out var v))
            {
                got.Add(new Rec(k.ToArray(), v.ToArray()));
            }
            reader.Append(stream.AsSpan(split));
            while (reader.TryRead(out var k, out var v))
            {
                got.Add(new Rec(k.ToArray(), v.ToArray()));
            }
            reader.Complete();
            Assert.Equal(records, got);
        }
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void RoundTripsWithRandomChunking(int seed)
    {
        var random = new Random(seed);
        var records = RandomRecords(random, 300);
        var stream = Rec.Encode(records);
        var reader = new RecordStreamReader(16);
        var got = new List<Rec>();
        int offset = 0;
        while (offset < stream.Length)
        {
            int chunk = Math.Min(stream.Length - offset, random.Next(4) == 0 ? random.Next(1, 4) : random.Next(1, 9000));
            reader.Append(stream.AsSpan(offset, chunk));
            offset += chunk;
            while (reader.TryRead(out var k, out var v))
            {
                got.Add(new Rec(k.ToArray(), v.ToArray()));
            }
        }
        reader.Complete();
        Assert.Equal(records, got);
    }

    [Fact]
    public void SpanReaderReportsConsumedUpToTheFirstIncompleteRecord()
    {
        var records = new[] { Rec.Of("alpha", 1), Rec.Of("beta", 2), Rec.Of("gamma", 3) };
        var stream = Rec.Encode(records);
        int firstTwo = Rec.Encode(records.Take(2)).Length;
        var reader = new RecordSpanReader(stream.AsSpan(0, stream.Length - 1));
        int count = 0;
        while (reader.TryRead(out _, out _))
        {
            count++;
        }
        Assert.Equal(2, count);
        Assert.Equal(firstTwo, reader.Consumed);
        Assert.Equal(RecordParseStatus.Incomplete, reader.Status);
    }

    [Fact]
    public void EncodedLengthMatchesWhatIsWritten()
    {
        foreach (int k in new[] { 0, 1, 127, 128, 16_383, 16_384, RecordLimits.MaxKeyBytes })
        {
            foreach (int v in new[] { 0, 127, 128, 16_384, RecordLimits.MaxValueBytes })
            {
                var dest = new byte[RecordCodec.EncodedLength(k, v)];
                Assert.Equal(dest.Length, RecordCodec.Write(dest, new byte[k], new byte[v]));
                Assert.Equal(RecordParseStatus.Complete, RecordCodec.TryParse(dest, out var bounds));
                Assert.Equal((k, v, dest.Length), (bounds.KeyLength, bounds.ValueLength, bounds.Length));
            }
        }
    }

    [Fact]
    public void LengthsOverTheLimitsAreMalformedNotIncomplete()
    {
        Span<byte> header = stackalloc byte[8];
        int n = RecordCodec.WriteVarint(header, RecordLimits.MaxKeyBytes + 1);
        n += RecordCodec.WriteVarint(header[n..], 1);
        Assert.Equal(RecordParseStatus.Malformed, RecordCodec.TryParse(header[..n], out _));

        n = RecordCodec.WriteVarint(header, 1);
        n += RecordCodec.WriteVarint(header[n..], RecordLimits.MaxValueBytes + 1);
        Assert.Equal(RecordParseStatus.Malformed, RecordCodec.TryParse(header[..n], out _));

        // A varint longer than 3 bytes, and a non-minimal one.
        Assert.Equal(RecordParseStatus.Malformed, RecordCodec.TryParse(new byte[] { 0x80, 0x80, 0x80, 0x01, 0 }, out _));
        Assert.Equal(RecordParseStatus.Malformed, RecordCodec.TryParse(new byte[] { 0x81, 0x00, 0 }, out _));

        var reader = new RecordStreamReader();
        reader.Append(new byte[] { 0xFF, 0xFF, 0xFF, 0x7F });
        var error = Assert.Throws<InvalidDataException>(() => reader.TryRead(out _, out _));
        Assert.Contains("corrupt record stream", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void CompleteFailsInTheMiddleOfARecord()
    {
        var stream = Rec.Encode([Rec.Of("key", 7)]);
        var reader = new RecordStreamReader();
        reader.Append(stream.AsSpan(0, stream.Length - 3));
        Assert.False(reader.TryRead(out _, out _));
        Assert.Throws<InvalidDataException>(reader.Complete);
    }

    [Fact]
    public void RecordBufferRejectsOversizedRecordsClearly()
    {
        var buffer = new RecordBuffer();
        var error = Assert.Throws<RecordTooLargeException>(() => buffer.Emit(new byte[RecordLimits.MaxKeyBytes + 1], [1]));
        Assert.Contains("65536 bytes per key", error.Message, StringComparison.Ordinal);
        Assert.Throws<RecordTooLargeException>(() => buffer.Emit([1], new byte[RecordLimits.MaxValueBytes + 1]));
        buffer.Emit(new byte[RecordLimits.MaxKeyBytes], new byte[RecordLimits.MaxValueBytes]);
        Assert.Equal(1, buffer.Records);
    }
}

using System.Buffers;
using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.MapReduce.Tests.FrontEnd;

public class MessagePackTests
{
    private static byte[] Encode(Action<MessagePackWriter> write)
    {
        var buffer = new ArrayBufferWriter<byte>();
        write(new MessagePackWriter(buffer));
        return buffer.WrittenSpan.ToArray();
    }

    [Theory]
    [InlineData(0L, "00")]
    [InlineData(127L, "7f")]
    [InlineData(128L, "cc80")]
    [InlineData(256L, "cd0100")]
    [InlineData(65536L, "ce00010000")]
    [InlineData(4294967296L, "cf0000000100000000")]
    [InlineData(-1L, "ff")]
    [InlineData(-32L, "e0")]
    [InlineData(-33L, "d0df")]
    [InlineData(-129L, "d1ff7f")]
    [InlineData(-32769L, "d2ffff7fff")]
    [InlineData(long.MinValue, "d38000000000000000")]
    public void IntegersUseTheSpecsShortestEncodingAndRoundTrip(long value, string hex)
    {
        var bytes = Encode(w => w.Write(value));
        Assert.Equal(hex, Convert.ToHexStringLower(bytes));
        var reader = new MessagePackReader(bytes);
        Assert.Equal(value, reader.ReadInt64());
        Assert.True(reader.End);
    }

    [Fact]
    public void StringsBinaryMapsArraysBooleansNilAndDoublesRoundTrip()
    {
        string longText = new('é', 40_000);
        var blob = Enumerable.Range(0, 70_000).Select(i => (byte)i).ToArray();
        var bytes = Encode(w =>
        {
            w.WriteMapHeader(3);
            w.Write("text");
            w.Write(longText);
            w.Write("list");
            w.WriteArrayHeader(4);
            w.Write(true);
            w.WriteNil();
            w.Write(2.5);
            w.WriteBinary(blob);
            w.Write("a");
            w.Write((string?)null);
        });
        var r = new MessagePackReader(bytes);
        Assert.Equal(3, r.ReadMapHeader());
        Assert.Equal("text", r.ReadString());
        Assert.Equal(longText, r.ReadString());
        Assert.Equal("list", r.ReadString());
        Assert.Equal(4, r.ReadArrayHeader());
        Assert.True(r.ReadBoolean());
        Assert.True(r.TryReadNil());
        Assert.Equal(2.5, r.ReadDouble());
        Assert.Equal(blob, r.ReadBinary().ToArray());
        Assert.Equal("a", r.ReadString());
        Assert.Null(r.ReadString());
        Assert.True(r.End);
    }

    [Fact]
    public void SkipPassesOverNestedValues()
    {
        var bytes = Encode(w =>
        {
            w.WriteArrayHeader(2);
            w.WriteMapHeader(1);
            w.Write("k");
            w.WriteArrayHeader(2);
            w.Write(ulong.MaxValue);
            w.WriteBinary([1, 2, 3]);
            w.Write("after");
        });
        var r = new MessagePackReader(bytes);
        Assert.Equal(2, r.ReadArrayHeader());
        r.Skip();
        Assert.Equal("after", r.ReadString());
    }

    [Theory]
    [InlineData("", "ends early")]
    [InlineData("a5616263", "past the end")] // str of 5 with only 3 bytes
    [InlineData("dbffffffff", "length too large")]
    [InlineData("dd00100000", "cannot fit")] // array of 1M items in 5 bytes
    [InlineData("a2c328", "not valid UTF-8")]
    [InlineData("d40100", "unsupported")] // fixext 1
    public void MalformedInputIsAClearInvalidDataException(string hex, string expected)
    {
        var bytes = Convert.FromHexString(hex);
        var ex = Assert.Throws<InvalidDataException>(() =>
        {
            var r = new MessagePackReader(bytes);
            r.Skip();
        });
        Assert.Contains(expected, ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void NestingBeyondTheLimitIsRefused()
    {
        var bytes = Enumerable.Repeat((byte)0x91, MessagePackReader.MaxDepth + 5).Append((byte)0xc0).ToArray();
        var ex = Assert.Throws<InvalidDataException>(() =>
        {
            var r = new MessagePackReader(bytes);
            r.Skip();
        });
        Assert.Contains("nesting", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void RandomGarbageNeverEscapesAsAnythingButInvalidData()
    {
        var rng = new Random(7);
        var buffer = new byte[64];
        for (int i = 0; i < 20_000; i++)
        {
            rng.NextBytes(buffer);
            var slice = buffer.AsSpan(0, rng.Next(1, buffer.Length)).ToArray();
            try
            {
                var r = new MessagePackReader(slice);
                while (!r.End)
                {
                    r.Skip();
                }
            }
            catch (InvalidDataException)
            {
                // The only acceptable failure.
            }
            catch (OverflowException)
            {
                // A uint64 that does not fit a long is reported by ReadInt64 only, never by Skip.
                Assert.Fail("Skip must not overflow");
            }
        }
    }
}

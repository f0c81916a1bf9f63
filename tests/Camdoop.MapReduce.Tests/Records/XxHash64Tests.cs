using System.Text;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.Tests.Records;

public class XxHash64Tests
{
    // Seed 0 is every checksum's; the others check that a seed's 64 bits pass unchanged, the top bit included.
    private static readonly ulong[] Seeds = [0, 1, 12345, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0x9E37_79B9_7F4A_7C15, ulong.MaxValue];

    // From xxhsum (the xxHash project's command line tool) over the ASCII text: under one 32-byte stripe, one stripe,
    // a stripe with an 8-byte lane and single bytes after it (43), two stripes and a 4-byte lane (68).
    [Theory]
    [InlineData("", 0xEF46DB3751D8E999UL)]
    [InlineData("a", 0xD24EC4F1A98C6E5BUL)]
    [InlineData("abc", 0x44BC2CF5AD770999UL)]
    [InlineData("01234567890123456789012345678901", 0xE5CC9F411EA110BAUL)]
    [InlineData("0123456789012345678901234567890123456789012", 0xB8275BE97AC4B50AUL)]
    [InlineData("Camdoop: exploiting in-network aggregation for big data applications", 0x5F22258074C79A82UL)]
    public void MatchesReferenceVectors(string text, ulong expected)
    {
        var bytes = Encoding.ASCII.GetBytes(text);
        Assert.Equal(expected, XxHash64.Hash(bytes));
        var hasher = new XxHash64();
        hasher.Append(bytes);
        Assert.Equal(expected, hasher.GetDigest());
    }

    [Fact]
    public void OneShotEqualsTheIndependentImplementationForEveryLengthAndSeed()
    {
        // Every length up to 1 KiB (every tail after every number of stripes), at offsets that move the input's
        // alignment, then a few large inputs: checksums written by older builds still verify, and the other way.
        var random = new Random(11);
        var data = new byte[(1 << 20) + 64];
        random.NextBytes(data);
        foreach (ulong seed in Seeds.Append((ulong)random.NextInt64()))
        {
            for (int length = 0; length <= 1024; length++)
            {
                var input = data.AsSpan(random.Next(0, 64), length);
                Assert.Equal(IndependentXxHash64.Hash(input, seed), XxHash64.Hash(input, seed));
            }
            foreach (int length in new[] { 4095, 65536, 65537 + 31, 1 << 20 })
            {
                var input = data.AsSpan(random.Next(0, 64), length);
                Assert.Equal(IndependentXxHash64.Hash(input, seed), XxHash64.Hash(input, seed));
            }
        }
    }

    [Fact]
    public void IncrementalEqualsTheIndependentImplementationForAnyChunking()
    {
        var random = new Random(5);
        var data = new byte[3000];
        random.NextBytes(data);
        for (int round = 0; round < 2000; round++)
        {
            ulong seed = Seeds[round % Seeds.Length];
            int length = random.Next(0, data.Length + 1);
            var input = data.AsSpan(0, length);
            var hasher = new XxHash64(seed);
            var independent = new IndependentXxHash64(seed);
            for (int offset = 0, chunk; offset < length; offset += chunk)
            {
                chunk = Math.Min(length - offset, random.Next(0, 80));
                hasher.Append(input.Slice(offset, chunk));
                independent.Append(input.Slice(offset, chunk));
            }
            Assert.Equal(independent.GetDigest(), hasher.GetDigest());
            Assert.Equal(XxHash64.Hash(input, seed), hasher.GetDigest());
        }
    }

    [Fact]
    public void ResetStartsAgainFromTheSeed()
    {
        var hasher = new XxHash64(Seeds[^1]);
        hasher.Append("some bytes before"u8);
        hasher.Reset();
        hasher.Append("abc"u8);
        Assert.Equal(XxHash64.Hash("abc"u8, Seeds[^1]), hasher.GetDigest());
    }

    [Fact]
    public void StripesSpreadKeysOverAllSix()
    {
        var counts = new int[Stripes.Count];
        for (int i = 0; i < 60_000; i++)
        {
            counts[Stripes.Of(Encoding.ASCII.GetBytes($"key-{i}"))]++;
        }
        Assert.All(counts, c => Assert.InRange(c, 9_000, 11_000));
    }
}

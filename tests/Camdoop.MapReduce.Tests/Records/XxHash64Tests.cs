using System.Text;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.Tests.Records;

public class XxHash64Tests
{
    [Theory]
    [InlineData("", 0UL, 0xEF46DB3751D8E999UL)]
    [InlineData("a", 0UL, 0xD24EC4F1A98C6E5BUL)]
    [InlineData("abc", 0UL, 0x44BC2CF5AD770999UL)]
    public void MatchesReferenceVectors(string text, ulong seed, ulong expected) =>
        Assert.Equal(expected, XxHash64.Hash(Encoding.ASCII.GetBytes(text), seed));

    [Fact]
    public void IncrementalEqualsOneShotForEveryLengthAndChunking()
    {
        var random = new Random(5);
        var data = new byte[300];
        random.NextBytes(data);
        var hasher = new XxHash64();
        for (int length = 0; length <= data.Length; length += 7)
        {
            foreach (ulong seed in new ulong[] { 0, 12345 })
            {
                hasher.Reset(seed);
                int offset = 0;
                while (offset < length)
                {
                    int chunk = Math.Min(length - offset, random.Next(1, 40));
                    hasher.Append(data.AsSpan(offset, chunk));
                    offset += chunk;
                }
                Assert.Equal(XxHash64.Hash(data.AsSpan(0, length), seed), hasher.GetDigest());
            }
        }
    }

    [Fact]
    public void ShortInputsHashAsTheIncrementalHasherDoes()
    {
        // The one-shot path for fewer than 32 bytes is separate code: check every length, at the start, in the
        // middle and at the very end of a buffer, against the incremental hasher's tail handling.
        var random = new Random(8);
        var data = new byte[64];
        var hasher = new XxHash64();
        for (int round = 0; round < 20; round++)
        {
            random.NextBytes(data);
            ulong seed = round % 2 == 0 ? 0 : (ulong)random.NextInt64();
            for (int length = 0; length <= 40; length++)
            {
                foreach (int offset in new[] { 0, 5, data.Length - length })
                {
                    var input = data.AsSpan(offset, length);
                    hasher.Reset(seed);
                    hasher.Append(input);
                    Assert.Equal(hasher.GetDigest(), XxHash64.Hash(input, seed));
                }
            }
        }
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

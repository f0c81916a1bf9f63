using System.Text;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Tests.Records;

public sealed class KeyHashTests
{
    [Fact]
    public void EveryBitOfEveryByteChangesTheHash()
    {
        var random = new Random(3);
        for (int length = 0; length <= 70; length++)
        {
            var key = new byte[length];
            random.NextBytes(key);
            ulong original = KeyHash.Of(key, 17);
            Assert.Equal(original, KeyHash.Of(key, 17));
            Assert.NotEqual(original, KeyHash.Of(key, 18));
            for (int i = 0; i < length; i++)
            {
                for (int bit = 0; bit < 8; bit++)
                {
                    key[i] ^= (byte)(1 << bit);
                    Assert.NotEqual(original, KeyHash.Of(key, 17));
                    key[i] ^= (byte)(1 << bit);
                }
            }
            // A key and the same bytes one longer (a trailing zero) differ.
            Assert.NotEqual(original, KeyHash.Of([.. key, 0], 17));
        }
    }

    [Fact]
    public void StripesAndReduceTasksAreSpreadEvenlyAndIndependently()
    {
        // Keys alike but for a few characters in the middle (words, paths, numbered keys).
        var cells = new int[Stripes.Count, 4];
        const int keys = 120_000;
        for (int i = 0; i < keys; i++)
        {
            var key = Encoding.ASCII.GetBytes($"/var/log/host-{i:D6}/app.log");
            cells[Stripes.Of(key), HashPartitioner.Partition(key, 4)]++;
        }
        double expected = keys / (Stripes.Count * 4.0);
        foreach (int count in cells)
        {
            Assert.InRange(count, expected * 0.93, expected * 1.07);
        }
    }
}

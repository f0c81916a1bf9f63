using Camdoop.MapReduce.DataGen;

namespace Camdoop.MapReduce.Tests.DataGen;

public sealed class DeterministicRandomTests
{
    [Fact]
    public void NextBytesDrawsWhatNextDrawsByteByByte()
    {
        var bulk = new DeterministicRandom(7, 3);
        var single = new DeterministicRandom(7, 3);
        foreach (int length in new[] { 0, 1, 5, 19, 64 })
        {
            var bytes = new byte[length];
            bulk.NextBytes(bytes, (byte)'!', 94);
            Assert.Equal(Enumerable.Range(0, length).Select(_ => (byte)('!' + single.Next(94))), bytes);
        }
        // Both generators are at the same point of the stream afterwards.
        Assert.Equal(single.NextUInt64(), bulk.NextUInt64());
        Assert.Throws<ArgumentOutOfRangeException>(() => bulk.NextBytes(new byte[1], 0, 0));
    }
}

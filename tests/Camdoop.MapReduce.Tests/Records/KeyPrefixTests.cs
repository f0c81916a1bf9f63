using System.Buffers.Binary;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Tests.Records;

public sealed class KeyPrefixTests
{
    [Fact]
    public void IsTheFirstEightBytesZeroPaddedForEveryLength()
    {
        var random = new Random(3);
        var data = new byte[24];
        for (int round = 0; round < 50; round++)
        {
            random.NextBytes(data);
            for (int length = 0; length <= 12; length++)
            {
                foreach (int offset in new[] { 0, 3, data.Length - length })
                {
                    var key = data.AsSpan(offset, length);
                    var padded = new byte[8];
                    key[..Math.Min(8, length)].CopyTo(padded);
                    Assert.Equal(BinaryPrimitives.ReadUInt64BigEndian(padded), KeyPrefix.Of(key));
                }
            }
        }
    }
}

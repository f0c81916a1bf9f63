using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Tests.Records;

public class ShortCopyTests
{
    [Fact]
    public void CopiesEveryLengthExactlyWithoutTouchingTheBytesAround()
    {
        var random = new Random(5);
        var source = new byte[80];
        random.NextBytes(source);
        for (int length = 0; length <= 40; length++)
        {
            for (int offset = 0; offset < 8; offset++)
            {
                var destination = new byte[96];
                Array.Fill(destination, (byte)0xEE);
                ShortCopy.Copy(source.AsSpan(offset, length), destination.AsSpan(3, length + 5));
                Assert.True(destination.AsSpan(3, length).SequenceEqual(source.AsSpan(offset, length)), $"length {length}, offset {offset}");
                Assert.All(destination[..3], b => Assert.Equal(0xEE, b));
                Assert.All(destination[(3 + length)..], b => Assert.Equal(0xEE, b));
            }
        }
    }

    [Fact]
    public void ADestinationShorterThanTheSourceIsRefused() =>
        Assert.Throws<ArgumentException>(() => ShortCopy.Copy(new byte[20], new byte[19]));
}

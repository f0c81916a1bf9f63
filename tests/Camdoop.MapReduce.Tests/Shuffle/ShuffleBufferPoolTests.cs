using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Shuffle;

namespace Camdoop.MapReduce.Tests.Shuffle;

public class ShuffleBufferPoolTests
{
    [Fact]
    public void BuffersAreReusedByClassAndCounted()
    {
        var pool = new ShuffleBufferPool();
        var a = pool.Rent(1000);
        Assert.Equal(1024, a.Length);
        Assert.Equal(1024, pool.RentedBytes);
        pool.Return(a);
        Assert.Equal(0, pool.RentedBytes);
        Assert.Equal(1024, pool.FreeBytes);
        Assert.Same(a, pool.Rent(900));
        Assert.Equal(0, pool.FreeBytes);
        Assert.Equal(1, pool.Allocated);
    }

    [Fact]
    public void PeakRentedBytesIsTheMostHandedOutAtOnce()
    {
        var pool = new ShuffleBufferPool();
        var a = pool.Rent(1024);
        var b = pool.Rent(2048);
        Assert.Equal(3072, pool.PeakRentedBytes);
        pool.Return(a);
        var c = pool.Rent(512);
        Assert.Equal(2560, pool.RentedBytes);
        Assert.Equal(3072, pool.PeakRentedBytes); // less at once than before: the peak stays
        pool.Return(b);
        pool.Return(c);
        Assert.Equal(0, pool.RentedBytes);
        Assert.Equal(3072, pool.PeakRentedBytes);
        var d = pool.Rent(4096);
        Assert.Equal(4096, pool.PeakRentedBytes);
        pool.Return(d);
    }

    [Theory]
    [InlineData(1, 512)]
    [InlineData(512, 512)]
    [InlineData(513, 640)]
    [InlineData(640, 640)]
    [InlineData(641, 768)]
    [InlineData(897, 1024)]
    [InlineData(1025, 1280)]
    // A full 128 KB window plus a segment either side: 160 KB, where power-of-two classes gave 256 KB.
    [InlineData((128 * 1024) + (2 * ShuffleWire.MaxSegmentBytes), 160 * 1024)]
    [InlineData(3 * 1024 * 1024, 3 * 1024 * 1024)]
    [InlineData((3 * 1024 * 1024) + 1, 7 * 512 * 1024)]
    [InlineData(16 * 1024 * 1024, 16 * 1024 * 1024)]
    public void ClassesStepByQuarterPowersOfTwo(int request, int size)
    {
        var pool = new ShuffleBufferPool(freeBytesLimit: 32 * 1024 * 1024);
        var buffer = pool.Rent(request);
        Assert.Equal(size, buffer.Length);
        pool.Return(buffer);
        Assert.Same(buffer, pool.Rent(size));
    }

    [Fact]
    public void ARentTakesAFreeBufferUpToThreeClassesLarger()
    {
        var pool = new ShuffleBufferPool();
        var oneUp = pool.Rent(1536); // classes from 1025 bytes: 1280, then 1536, 1792, 2048, 2560
        pool.Return(oneUp);
        Assert.Same(oneUp, pool.Rent(1025));
        var threeUp = pool.Rent(2048);
        var fourUp = pool.Rent(2560);
        pool.Return(fourUp);
        Assert.NotSame(fourUp, pool.Rent(1025)); // 2560 bytes is four classes up: allocate rather than waste it
        pool.Return(threeUp);
        Assert.Same(threeUp, pool.Rent(1025));
        Assert.Equal(4, pool.Allocated);
        Assert.Equal(2560, pool.FreeBytes);
        Assert.Equal(1280, ShuffleBufferPool.SizeFor(1025));
    }

    [Fact]
    public void MoreThanSixteenMebibytesIsRefused()
    {
        var pool = new ShuffleBufferPool();
        Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent((16 * 1024 * 1024) + 1));
    }

    [Fact]
    public void FreeBuffersBeyondTheLimitAreLeftToTheCollector()
    {
        var pool = new ShuffleBufferPool(freeBytesLimit: 64 * 1024);
        // A stream growing 16 KB -> 32 KB -> 64 KB returns the smaller ones; only what fits the limit stays.
        var small = pool.Rent(16 * 1024);
        var medium = pool.Rent(32 * 1024);
        var large = pool.Rent(64 * 1024);
        pool.Return(small);
        pool.Return(medium);
        pool.Return(large); // 16 + 32 + 64 KB > 64 KB: dropped
        Assert.Equal(48 * 1024, pool.FreeBytes);
        Assert.Equal(0, pool.RentedBytes);
        Assert.Same(medium, pool.Rent(32 * 1024));
        Assert.NotSame(large, pool.Rent(64 * 1024));
        Assert.Equal(4, pool.Allocated);
    }

    [Fact]
    public void ABufferFromElsewhereIsRefused()
    {
        var pool = new ShuffleBufferPool();
        Assert.Throws<ArgumentException>(() => pool.Return(new byte[1000]));
        Assert.Throws<ArgumentOutOfRangeException>(() => new ShuffleBufferPool(-1));
    }
}

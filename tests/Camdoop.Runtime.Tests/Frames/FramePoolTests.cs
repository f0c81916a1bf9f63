using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Tests.Frames;

public class FramePoolTests
{
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ReleasedFramesAreReusedAndCounted(bool threadSafe)
    {
        var pool = new FramePool(threadSafe: threadSafe);
        var a = pool.Rent();
        var b = pool.Rent();
        Assert.Equal(2, pool.Created);
        Assert.Equal(2, pool.InUse);
        Assert.Equal(FrameLayout.BufferSize, a.Buffer.Length);
        a.Length = 100;
        a.Release();
        Assert.Equal(0, a.Length);
        Assert.Equal(1, pool.InUse);
        Assert.Same(a, pool.Rent());
        Assert.Equal(2, pool.Created);
        a.Release();
        b.Release();
        Assert.Equal(0, pool.InUse);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void ReleasingAFrameTwiceFailsLoudly(bool threadSafe)
    {
        var pool = new FramePool(threadSafe: threadSafe);
        var frame = pool.Rent();
        frame.Release();
        Assert.Throws<InvalidOperationException>(frame.Release);
        // The pool was not corrupted: the frame is handed out once only.
        var first = pool.Rent();
        var second = pool.Rent();
        Assert.NotSame(first, second);
    }

    [Fact]
    public void ThePoolGrowsBeyondItsInitialCapacity()
    {
        var pool = new FramePool(initialCapacity: 16);
        var frames = new List<Frame>();
        for (int i = 0; i < 100; i++)
        {
            frames.Add(pool.Rent());
        }
        foreach (var f in frames)
        {
            f.Release();
        }
        Assert.Equal(0, pool.InUse);
        Assert.Equal(100, pool.Created);
        for (int i = 0; i < 100; i++)
        {
            pool.Rent();
        }
        Assert.Equal(100, pool.Created);
    }
}

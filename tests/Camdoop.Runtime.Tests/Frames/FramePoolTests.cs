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

    [Fact]
    public void FreeFramesMovedToAnotherPoolAreRentedAndReturnedThere()
    {
        var from = new FramePool(threadSafe: false);
        var to = new FramePool(initialCapacity: 16, threadSafe: false);
        var frames = Enumerable.Range(0, 40).Select(_ => from.Rent()).ToList();
        frames.ForEach(f => f.Release());
        Assert.Equal(40, from.FreeCount);
        Assert.Equal(30, from.MoveFreeTo(to, 30));
        Assert.Equal(10, from.FreeCount);
        Assert.Equal(30, to.FreeCount);
        Assert.Equal(10, from.MoveFreeTo(to, 100)); // no more than it has
        Assert.Equal(0, from.MoveFreeTo(to, 5));
        // The moved frames are the target's now: renting takes them, releasing brings them back there.
        var rented = Enumerable.Range(0, 40).Select(_ => to.Rent()).ToList();
        Assert.Equal(0, to.Created);
        Assert.All(rented, f => Assert.Contains(f, frames));
        rented.ForEach(f => f.Release());
        Assert.Equal(40, to.FreeCount);
        Assert.Equal(0, from.FreeCount);
        Assert.Equal(0, from.InUse + to.InUse); // 40 created by one, 40 free in the other
        Assert.Throws<InvalidOperationException>(() => new FramePool(threadSafe: true).MoveFreeTo(to, 1));
    }
}

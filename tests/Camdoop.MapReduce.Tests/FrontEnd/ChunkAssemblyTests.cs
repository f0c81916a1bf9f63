using Camdoop.FrontEnd;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>An uploaded chunk's buffer grows with the bytes that arrive, never from the length a client declares.</summary>
public class ChunkAssemblyTests
{
    [Fact]
    public void ADeclared240MiBChunkWithOnePartHoldsThePartNotTheDeclaredLength()
    {
        const long declared = 240L << 20;
        long before = GC.GetAllocatedBytesForCurrentThread();
        var chunk = new ChunkAssembly(0, declared);
        Assert.True(chunk.TryAppend(0, new byte[1000]));
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(allocated < 1 << 20, $"{allocated} bytes allocated for a 1,000-byte part of a {declared}-byte chunk");
        Assert.True(chunk.Capacity < 1 << 20, $"holds {chunk.Capacity} bytes");
        Assert.False(chunk.IsComplete);
        Assert.Throws<InvalidOperationException>(() => chunk.Bytes);
    }

    [Fact]
    public void PartsInOrderGiveTheChunkExactlyAndAnythingElseIsRefused()
    {
        var random = new Random(7);
        var expected = new byte[300_001];
        random.NextBytes(expected);
        var chunk = new ChunkAssembly(3, expected.Length);
        Assert.False(chunk.TryAppend(1, expected.AsSpan(1, 10)));          // not from the start
        int offset = 0;
        foreach (int size in new[] { 1, 70_000, 0, 100_000, 130_000 })
        {
            Assert.True(chunk.TryAppend(offset, expected.AsSpan(offset, size)));
            offset += size;
            Assert.Equal(offset, chunk.Received);
            Assert.InRange(chunk.Capacity, offset, expected.Length);
        }
        Assert.False(chunk.TryAppend(offset - 5, expected.AsSpan(offset - 5, 5))); // a part again
        Assert.False(chunk.TryAppend(offset, new byte[expected.Length - offset + 1])); // past the length
        Assert.True(chunk.TryAppend(offset, expected.AsSpan(offset)));
        Assert.True(chunk.IsComplete);
        Assert.Equal(expected, chunk.Bytes);
    }

    [Fact]
    public void GrowthForIsExactlyWhatTheNextPartMakesTheBufferGrowBy()
    {
        // What the front-end's memory budget grants before each part must be what the buffer then takes.
        var chunk = new ChunkAssembly(0, 1_000_000);
        var random = new Random(3);
        var part = new byte[200_000];
        long offset = 0;
        while (offset < chunk.Length)
        {
            int n = (int)Math.Min(random.Next(0, part.Length), chunk.Length - offset);
            long before = chunk.Capacity;
            long growth = chunk.GrowthFor(n);
            Assert.True(chunk.Continues(offset, n));
            Assert.True(chunk.TryAppend(offset, part.AsSpan(0, n)));
            Assert.Equal(before + growth, chunk.Capacity);
            offset += n;
        }
        Assert.Equal(chunk.Length, chunk.Capacity);
        Assert.Equal(0, chunk.GrowthFor(0));
        Assert.False(chunk.Continues(offset, 1));
        // The first part of a 240 MiB chunk asks for 64 KiB, not the declared length.
        Assert.Equal(64 * 1024, new ChunkAssembly(0, 240L << 20).GrowthFor(1000));
    }

    [Fact]
    public void AnEmptyChunkIsCompleteAtOnce()
    {
        var chunk = new ChunkAssembly(0, 0);
        Assert.True(chunk.TryAppend(0, []));
        Assert.True(chunk.IsComplete);
        Assert.Empty(chunk.Bytes);
    }
}

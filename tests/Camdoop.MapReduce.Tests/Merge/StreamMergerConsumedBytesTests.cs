using System.Globalization;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.Merge;

/// <summary>
/// <see cref="StreamMerger.ConsumedBytes"/>, which a simulator prices as work: the input read so far, never what
/// still waits in an input or what a reset input discarded.
/// </summary>
public class StreamMergerConsumedBytesTests
{
    private static List<Rec> Records(int first, int count, int step) =>
        Enumerable.Range(0, count).Select(i => Rec.Of((first + (i * step)).ToString("D6", CultureInfo.InvariantCulture), (ulong)i)).ToList();

    [Fact]
    public void ConsumedGrowsWithEachDrainUpToEveryInputByte()
    {
        // Distinct keys (even and odd): nothing combines, so what is read is what comes out.
        var a = Rec.Encode(Records(0, 300, 2));
        var b = Rec.Encode(Records(1, 300, 2));
        var merger = new StreamMerger(new SumJob(), 2, MergeMode.Merge);
        merger.Append(0, a);
        merger.Append(1, b);
        merger.Finish(0);
        merger.Finish(1);
        Assert.Equal(0, merger.ConsumedBytes);

        var output = new byte[256];
        long emitted = 0, last = 0;
        DrainStatus status;
        do
        {
            status = merger.Drain(output, out int written);
            emitted += written;
            long consumed = merger.ConsumedBytes;
            Assert.True(consumed >= last, $"consumed went back from {last} to {consumed}");
            // Read ahead of what came out by at most what waits to be emitted.
            Assert.InRange(consumed - emitted, 0, merger.PendingOutputBytes + 64);
            last = consumed;
        }
        while (status != DrainStatus.Completed);
        Assert.Equal(a.Length + b.Length, merger.ConsumedBytes);
        Assert.Equal(a.Length + b.Length, emitted);
    }

    [Fact]
    public void BytesAResetInputDiscardsWereNotConsumed()
    {
        var a = Rec.Encode(Records(0, 50, 2));
        var b = Rec.Encode(Records(1, 50, 2));
        var merger = new StreamMerger(new SumJob(), 2, MergeMode.Merge);
        merger.Append(0, a);
        merger.Append(1, b);
        merger.ResetInput(1);
        Assert.Equal(0, merger.ConsumedBytes);
        merger.Finish(0);
        merger.Finish(1);
        var output = new byte[64 * 1024];
        Assert.Equal(DrainStatus.Completed, merger.Drain(output, out int written));
        Assert.Equal(a.Length, written);
        Assert.Equal(a.Length, merger.ConsumedBytes);
    }
}

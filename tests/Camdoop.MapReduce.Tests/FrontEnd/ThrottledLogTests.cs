using Camdoop.FrontEnd;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>Refusals at any rate cost the log one line and one summary per interval.</summary>
public class ThrottledLogTests
{
    [Fact]
    public void ThreeThousandLinesInAnIntervalAreOneLineAndACount()
    {
        var lines = new List<string>();
        long now = 0;
        // An hour's interval on a clock the test moves: the summary's own timer stays out of the way.
        using (var log = new ThrottledLog(lines.Add, TimeSpan.FromHours(1), () => now))
        {
            for (int i = 0; i < 3000; i++)
            {
                now = i * 1000L; // 3,000 lines in 3,000 s
                log.Write($"refused client {i}");
            }
            Assert.Equal(["refused client 0"], lines);
            Assert.Equal(2999, log.Suppressed);

            now = 3_600_000; // the next interval: the summary, then the line
            log.Write("refused client 3000");
        }
        Assert.Equal(3, lines.Count);
        Assert.Equal("2999 more like it in 3600 s, not written one by one; the last: refused client 2999", lines[1]);
        Assert.Equal("refused client 3000", lines[2]);
    }

    [Fact]
    public void TheSummaryComesWhenTheIntervalEndsWithoutAnotherLine()
    {
        var lines = new List<string>();
        var written = new SemaphoreSlim(0);
        using var log = new ThrottledLog(
            line =>
            {
                lock (lines)
                {
                    lines.Add(line);
                }
                written.Release();
            },
            TimeSpan.FromMilliseconds(200),
            () => 0); // a clock that stands still: all three lines fall in one interval however slow the machine

        log.Write("first");
        log.Write("second");
        log.Write("third");
        Assert.True(written.Wait(TimeSpan.FromSeconds(10)));
        Assert.True(written.Wait(TimeSpan.FromSeconds(10)), "no summary after the interval");
        lock (lines)
        {
            Assert.Equal(["first", "2 more like it in 0.2 s, not written one by one; the last: third"], lines);
        }
    }
}

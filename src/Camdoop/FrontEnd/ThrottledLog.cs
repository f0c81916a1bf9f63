namespace Camdoop.FrontEnd;

/// <summary>
/// A log that writes at most one line of a kind per interval and sums up the rest: a client opening thousands of
/// connections a second must not write thousands of lines a second to the node's log. The first line of an
/// interval is written as it comes; the others are counted, and when the interval ends one line says how many there
/// were and what the last one said. Safe to call from any thread.
/// </summary>
public sealed class ThrottledLog : IDisposable
{
    private readonly Action<string> _log;
    private readonly long _intervalMs;
    private readonly Func<long> _nowMs;
    private readonly Lock _lock = new();
    private readonly Timer _flush;
    private bool _windowOpen;
    private long _windowStart;
    private long _suppressed;
    private string? _last;

    /// <param name="log">Where lines go.</param>
    /// <param name="interval">At most one line (and one summary) per interval.</param>
    /// <param name="nowMs">The clock in milliseconds (null: the machine's monotonic clock).</param>
    public ThrottledLog(Action<string> log, TimeSpan interval, Func<long>? nowMs = null)
    {
        ArgumentNullException.ThrowIfNull(log);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(interval, TimeSpan.Zero);
        _log = log;
        _intervalMs = (long)interval.TotalMilliseconds;
        _nowMs = nowMs ?? (() => Environment.TickCount64);
        _flush = new Timer(_ => Flush(), null, Timeout.Infinite, Timeout.Infinite);
    }

    /// <summary>Lines counted and not written (summed up in the summaries).</summary>
    public long Suppressed { get; private set; }

    public void Write(string line)
    {
        lock (_lock)
        {
            long now = _nowMs();
            if (!_windowOpen || now - _windowStart >= _intervalMs)
            {
                SummariseLocked();
                _windowOpen = true;
                _windowStart = now;
                _log(line);
                return;
            }
            if (_suppressed++ == 0)
            {
                // The summary comes when the interval ends, whether or not another line does.
                _flush.Change(Math.Max(1, _windowStart + _intervalMs - now), Timeout.Infinite);
            }
            Suppressed++;
            _last = line;
        }
    }

    /// <summary>Writes the summary of the lines counted so far, if any.</summary>
    public void Flush()
    {
        lock (_lock)
        {
            SummariseLocked();
        }
    }

    public void Dispose()
    {
        _flush.Dispose();
        Flush();
    }

    private void SummariseLocked()
    {
        if (_suppressed == 0)
        {
            return;
        }
        _log(FormattableString.Invariant($"{_suppressed} more like it in {_intervalMs / 1000.0:0.###} s, not written one by one; the last: {_last}"));
        _suppressed = 0;
        _last = null;
    }
}

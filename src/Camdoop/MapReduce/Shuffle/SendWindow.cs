namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// The send window of one epoch of an <see cref="OutboundStream"/>: the offsets sent and acknowledged, how far the
/// receiver's window reaches, whether the FIN went, and loss recovery: go-back-N from the acknowledged offset, one
/// round-trip sample timed at a time (none across a retransmission, as Karn's rule says), and the backoff of the
/// retransmission timer. Offsets count from 0 in each epoch.
/// A mutable struct, held in a field of its stream and used in place (a server holds thousands of streams).
/// </summary>
internal struct SendWindow
{
    private readonly int _initialWindow;
    private long _acked;
    private long _sent;
    private long _sentHigh;
    private long _edge;
    private long _recover; // where the last go-back-N went back from: a Gap ack below it reports the same loss
    private long _rttOffset; // the offset whose acknowledgement completes the sample being timed (-1: none)
    private long _rttTime;
    private bool _finSent;
    private bool _probedSinceProgress;

    public SendWindow(int initialWindow, int maxWindow)
    {
        _initialWindow = initialWindow;
        MaxWindow = maxWindow;
        _edge = initialWindow;
        _rttOffset = -1;
    }

    /// <summary>The largest window the stream uses (its share of the server's buffer budget).</summary>
    public int MaxWindow { get; }

    public readonly long Acknowledged => _acked;

    /// <summary>The next offset a segment would start at.</summary>
    public readonly long Sent => _sent;

    /// <summary>The highest offset sent, at least once.</summary>
    public readonly long SentHigh => _sentHigh;

    /// <summary>The receiver's window edge: the stream may send up to this offset.</summary>
    public readonly long Edge => _edge;

    public readonly bool FinSent => _finSent;

    /// <summary>Last time the stream made progress (ack or window advanced, or a new flight started).</summary>
    public long LastProgress { get; private set; }

    /// <summary>A probe (or a go-back) went out since the last progress.</summary>
    public readonly bool ProbedSinceProgress => _probedSinceProgress;

    /// <summary>Consecutive timeouts or probes without progress (the wait doubles each time).</summary>
    public int Backoff { get; private set; }

    /// <summary>Bytes sent (at least once) and not acknowledged.</summary>
    public readonly bool HasUnacknowledgedData => _sentHigh > _acked;

    /// <summary>Bytes the receiver's window allows beyond the send offset.</summary>
    public readonly long Room => _edge - _sent;

    /// <summary>The window past the acknowledged offset, at most <see cref="MaxWindow"/>.</summary>
    public readonly long Effective => Math.Min(Math.Max(_edge - _acked, 0), MaxWindow);

    /// <summary>Bytes a segment could carry now, of a stream whose bytes end at <paramref name="end"/>.</summary>
    public readonly long Sendable(long end) => Math.Max(0, Math.Min(end, _edge) - _sent);

    /// <summary>Whether bytes before <paramref name="end"/> wait inside the window.</summary>
    public readonly bool CanSend(long end) => _sent < Math.Min(end, _edge);

    /// <summary>Whether every byte before <paramref name="end"/> was sent (the FIN could follow).</summary>
    public readonly bool AllSent(long end) => _sent == end;

    /// <summary>Whether bytes before <paramref name="end"/> wait outside the window.</summary>
    public readonly bool IsClosedBefore(long end) => _sent < end && _sent >= _edge;

    /// <summary>
    /// Records a segment of <paramref name="length"/> bytes from the send offset, the FIN with it if
    /// <paramref name="fin"/>; <paramref name="newFlight"/> when nothing was in flight before it. Returns how many of
    /// its bytes had been sent before.
    /// </summary>
    public long OnSegmentSent(int length, bool fin, bool newFlight, long now)
    {
        if (newFlight)
        {
            LastProgress = now; // a new flight starts: time it from here
        }
        long after = _sent + length;
        long retransmitted = 0;
        if (_sent < _sentHigh)
        {
            retransmitted = Math.Min(length, _sentHigh - _sent);
            _rttOffset = -1; // Karn: no RTT sample across a retransmission
        }
        else if (_rttOffset < 0 && length > 0)
        {
            _rttOffset = after;
            _rttTime = now;
        }
        _sent = after;
        if (after > _sentHigh)
        {
            _sentHigh = after;
        }
        if (fin)
        {
            _finSent = true;
        }
        return retransmitted;
    }

    /// <summary>
    /// Applies a cumulative ack up to <paramref name="offset"/> with <paramref name="window"/> bytes beyond it. Returns
    /// false, changing nothing, when it acknowledges bytes never sent. <paramref name="rttSample"/> is a fresh
    /// round-trip sample (ns) or -1; <paramref name="progress"/> whether the acknowledged offset or the edge moved.
    /// </summary>
    public bool OnAck(long offset, uint window, long now, out long rttSample, out bool progress)
    {
        rttSample = -1;
        progress = false;
        if (offset > _sentHigh || offset < 0)
        {
            return false;
        }
        if (offset > _acked)
        {
            if (_rttOffset >= 0 && offset >= _rttOffset)
            {
                rttSample = now - _rttTime;
                _rttOffset = -1;
            }
            _acked = offset;
            if (_sent < _acked)
            {
                _sent = _acked;
            }
            progress = true;
        }
        long edge = offset + window;
        if (edge > _edge)
        {
            _edge = edge;
            progress = true;
        }
        return true;
    }

    /// <summary>Whether a Gap ack at <paramref name="offset"/> reports a loss that going back has not answered yet.</summary>
    public readonly bool IsNewLoss(long offset) => offset == _acked && _sentHigh > _acked && _recover <= _acked;

    /// <summary>The stream made progress: the timer starts afresh.</summary>
    public void OnProgress(long now)
    {
        LastProgress = now;
        Backoff = 0;
        _probedSinceProgress = false;
    }

    /// <summary>Go-back-N: everything from the acknowledged offset goes again.</summary>
    public void Rewind()
    {
        _recover = _sentHigh;
        _sent = _acked;
        _finSent = false;
        _rttOffset = -1;
    }

    /// <summary>
    /// The retransmission timer found no progress. The first time, returns false: a probe is to go (the receiver may
    /// just not have acked a quiet stream yet). After that, goes back and doubles the wait, and returns true.
    /// </summary>
    public bool OnTimeout(long now)
    {
        LastProgress = now;
        if (!_probedSinceProgress)
        {
            _probedSinceProgress = true;
            return false;
        }
        Rewind();
        Backoff = Math.Min(Backoff + 1, 16);
        return true;
    }

    /// <summary>A probe went out: wait a (backed-off) probe interval for the next.</summary>
    public void OnProbeSent(long now)
    {
        Backoff = Math.Min(Backoff + 1, 16);
        LastProgress = now;
    }

    /// <summary>A segment from <paramref name="offset"/> was not sent after all: send from there again.</summary>
    public void Unsend(long offset)
    {
        if (offset < _sent)
        {
            _sent = Math.Max(offset, _acked);
            _finSent = false;
            _rttOffset = -1;
        }
    }

    /// <summary>When bytes in flight time out: an RTO after the last progress, doubled per try, at most <paramref name="maxWait"/>.</summary>
    public readonly long RetransmitDeadline(long rto, long maxWait) => LastProgress + Math.Min(rto << Math.Min(Backoff, 10), maxWait);

    /// <summary>When a closed window is probed: as <see cref="RetransmitDeadline"/>, but waiting at least <paramref name="probeInterval"/>.</summary>
    public readonly long ProbeDeadline(long rto, long probeInterval, long maxWait) =>
        LastProgress + Math.Min(Math.Max(rto, probeInterval) << Math.Min(Backoff, 10), maxWait);

    /// <summary>A new epoch: nothing sent, the initial window, no backoff.</summary>
    public void Restart()
    {
        _acked = 0;
        _sent = 0;
        _sentHigh = 0;
        _recover = 0;
        _finSent = false;
        _edge = _initialWindow;
        _rttOffset = -1;
        _probedSinceProgress = false;
        Backoff = 0;
    }
}

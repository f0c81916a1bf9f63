namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>
/// The sending half of a connection as a state machine with no I/O: which segment to send next, and what an
/// acknowledgement or a timeout does to the window. NewReno (RFC 5681 and 6582: slow start, congestion avoidance,
/// fast retransmit and recovery with partial acknowledgements), the retransmission timer of RFC 6298 with
/// round-trip samples from echoed timestamps, and optionally DCTCP (RFC 8257). Sequence numbers are byte offsets in
/// the stream; the end of the stream takes one more, as a FIN does.
/// </summary>
public sealed class TcpSender
{
    private readonly TcpOptions _options;
    private readonly ITcpStreamSource _source;
    private readonly int _mss;
    private long _una;
    private long _next;
    private long _highSent;
    private long _cwnd;
    private long _ssthresh = long.MaxValue;
    private long _avoidanceCredit;
    private int _dupAcks;
    private bool _inRecovery;
    private long _recover = -1;
    private bool _retransmitFirst;
    private long _srtt;
    private long _rttvar;
    private long _rto;
    private double _alpha = 1;
    private long _windowEnd;
    private long _ackedInWindow;
    private long _markedInWindow;
    private long _reducedUntil = -1;

    private readonly ulong _jitterSeed;

    /// <param name="options">How the connection behaves.</param>
    /// <param name="source">The bytes it sends.</param>
    /// <param name="jitterSeed">Spreads this connection's backed-off timeouts (any value; differs per connection).</param>
    public TcpSender(TcpOptions options, ITcpStreamSource source, ulong jitterSeed = 0)
    {
        _jitterSeed = jitterSeed;
        _options = options;
        _source = source;
        _mss = options.SegmentSize;
        _cwnd = (long)options.InitialWindowSegments * _mss;
        _rto = options.InitialRto;
    }

    /// <summary>First byte not yet acknowledged.</summary>
    public long Unacknowledged => _una;

    /// <summary>Congestion window, bytes.</summary>
    public long Window => _cwnd;

    public long SlowStartThreshold => _ssthresh;

    public long BytesInFlight => _next > _una ? _next - _una : 0;

    /// <summary>Current retransmission timeout.</summary>
    public long Rto => _rto;

    /// <summary>Smoothed round-trip time (0 before the first sample).</summary>
    public long SmoothedRtt => _srtt;

    /// <summary>DCTCP's estimate of the fraction of bytes marked.</summary>
    public double Alpha => _alpha;

    /// <summary>When the retransmission timer expires, or <see cref="long.MaxValue"/> when nothing is in flight.</summary>
    public long RtoDeadline { get; private set; } = long.MaxValue;

    /// <summary>The whole stream, its end included, has been acknowledged.</summary>
    public bool IsDone => _source.IsComplete && _una == _source.Available + 1;

    public long Timeouts { get; private set; }

    public long FastRetransmits { get; private set; }

    public long SegmentsSent { get; private set; }

    public long SegmentsResent { get; private set; }

    /// <summary>Payload bytes put into segments, resent ones included.</summary>
    public long PayloadBytesSent { get; private set; }

    /// <summary>Payload bytes of segments sent again.</summary>
    public long PayloadBytesResent { get; private set; }

    public bool InRecovery => _inRecovery;

    /// <summary>
    /// The segment to send now, if the window and the data allow one: its first byte, payload length and whether
    /// it ends the stream. Nothing changes until <see cref="OnSent"/>.
    /// </summary>
    public bool TryNext(out long sequence, out int length, out bool fin)
    {
        long available = _source.Available;
        bool complete = _source.IsComplete;
        long end = complete ? available + 1 : available;
        sequence = _retransmitFirst ? _una : _next;
        length = 0;
        fin = false;
        if (sequence >= end)
        {
            return false;
        }
        length = (int)Math.Min(_mss, Math.Max(0, available - sequence));
        fin = complete && sequence + length == available;
        if (_retransmitFirst)
        {
            return true; // fast retransmit and partial acknowledgements resend at once, whatever the window
        }
        long flight = BytesInFlight;
        if (length < _mss && !fin && flight > 0)
        {
            return false; // Nagle: a short segment waits for the data in flight, or for more data
        }
        long window = _options.ReceiveWindowBytes > 0 ? Math.Min(_cwnd, _options.ReceiveWindowBytes) : _cwnd;
        return flight == 0 || sequence + Math.Max(length, 1) <= _una + window;
    }

    /// <summary>The segment <see cref="TryNext"/> named has been handed to the link at <paramref name="now"/>.</summary>
    public void OnSent(long sequence, int length, bool fin, long now)
    {
        long end = sequence + length + (fin ? 1 : 0);
        SegmentsSent++;
        PayloadBytesSent += length;
        if (sequence < _highSent)
        {
            SegmentsResent++;
            PayloadBytesResent += length;
        }
        if (_retransmitFirst && sequence == _una)
        {
            _retransmitFirst = false;
        }
        else
        {
            _next = Math.Max(_next, end);
        }
        _highSent = Math.Max(_highSent, end);
        if (RtoDeadline == long.MaxValue)
        {
            RtoDeadline = now + _rto;
        }
    }

    /// <summary>Copies the stream's bytes at <paramref name="sequence"/> into a segment's payload.</summary>
    public void ReadInto(long sequence, Span<byte> payload) => _source.Read(sequence, payload);

    /// <summary>An acknowledgement arrived: everything before <paramref name="ack"/> is in.</summary>
    public void OnAck(long ack, bool ecnEcho, long timestampEcho, long now)
    {
        if (ack > _highSent)
        {
            return; // acknowledges what was never sent
        }
        if (timestampEcho > 0 && timestampEcho <= now)
        {
            SampleRtt(now - timestampEcho);
        }
        if (_options.Dctcp)
        {
            TrackMarks(ack, ecnEcho);
        }
        if (ack > _una)
        {
            long acked = ack - _una;
            long flightBefore = BytesInFlight;
            _una = ack;
            if (_next < _una)
            {
                _next = _una;
            }
            _source.Acknowledged(Math.Min(ack, _source.Available));
            OnNewAck(ack, acked, flightBefore);
            RtoDeadline = _una < _highSent ? now + _rto : long.MaxValue;
        }
        else if (ack == _una && _una < _highSent)
        {
            OnDuplicateAck();
        }
        if (ecnEcho && ack > _reducedUntil)
        {
            ReduceForCongestion();
        }
    }

    /// <summary>The retransmission timer expired at <paramref name="now"/>: one segment's window, go back to the first unacknowledged byte.</summary>
    public void OnTimeout(long now)
    {
        if (_una >= _highSent)
        {
            RtoDeadline = long.MaxValue;
            return;
        }
        Timeouts++;
        _ssthresh = Math.Max(BytesInFlight / 2, 2L * _mss);
        _cwnd = _mss;
        _avoidanceCredit = 0;
        _next = _una;
        _inRecovery = false;
        _retransmitFirst = false;
        _dupAcks = 0;
        _recover = _highSent;
        _rto = Math.Min(_rto * 2, _options.MaxRto);
        RtoDeadline = now + _rto + Jitter();
    }

    private void OnNewAck(long ack, long acked, long flightBefore)
    {
        _dupAcks = 0;
        if (_inRecovery)
        {
            if (ack >= _recover)
            {
                // Full acknowledgement: leave recovery with the halved window.
                _inRecovery = false;
                _cwnd = Math.Max(Math.Min(_ssthresh, BytesInFlight + _mss), _mss);
            }
            else
            {
                // Partial acknowledgement: the next hole is lost too; resend it and deflate by what left.
                _retransmitFirst = true;
                _cwnd = Math.Max(_cwnd - acked + _mss, _mss);
            }
            return;
        }
        if (_cwnd < _ssthresh)
        {
            if (flightBefore * 2 >= _cwnd)
            {
                _cwnd += Math.Min(acked, 2L * _mss); // slow start, appropriate byte counting with L = 2
            }
        }
        else if (flightBefore + _mss >= _cwnd)
        {
            // Only a window that limited the sending grows (RFC 7661): a sender held back by its NIC would otherwise
            // grow a window it never uses, and halving it would not slow it down.
            _avoidanceCredit += acked;
            if (_avoidanceCredit >= _cwnd)
            {
                _avoidanceCredit -= _cwnd;
                _cwnd += _mss;
            }
        }
        // After a timeout the stack resets the backoff once new data is acknowledged.
        if (_srtt > 0)
        {
            _rto = Math.Clamp(_srtt + (4 * _rttvar), _options.MinRto, _options.MaxRto);
        }
    }

    private void OnDuplicateAck()
    {
        _dupAcks++;
        if (_inRecovery)
        {
            _cwnd += _mss; // each duplicate is a segment that left the network
            return;
        }
        if (_dupAcks == 3 && _una > _recover)
        {
            FastRetransmits++;
            _ssthresh = Math.Max(BytesInFlight / 2, 2L * _mss);
            _cwnd = _ssthresh + (3L * _mss);
            _inRecovery = true;
            _recover = _highSent;
            _retransmitFirst = true;
            _reducedUntil = _highSent;
        }
    }

    /// <summary>
    /// A marked segment was echoed: at most once per window of data, shrink by DCTCP's estimate (or halve, as a
    /// loss would, without DCTCP).
    /// </summary>
    private void ReduceForCongestion()
    {
        _reducedUntil = _highSent;
        if (_inRecovery)
        {
            return;
        }
        long reduced = _options.Dctcp ? (long)(_cwnd * (1 - (_alpha / 2))) : _cwnd / 2;
        // The growth credit stays: a small window reduced every round would otherwise never grow again.
        _cwnd = Math.Max(reduced, _mss);
        _ssthresh = _cwnd;
    }

    /// <summary>DCTCP: the fraction of bytes acknowledged with ECN echo, folded into alpha once per window.</summary>
    private void TrackMarks(long ack, bool ecnEcho)
    {
        long acked = Math.Max(0, ack - _una);
        if (acked == 0)
        {
            acked = 1; // a duplicate still reports one segment's mark
        }
        _ackedInWindow += acked;
        if (ecnEcho)
        {
            _markedInWindow += acked;
        }
        if (ack >= _windowEnd)
        {
            double fraction = _ackedInWindow == 0 ? 0 : (double)_markedInWindow / _ackedInWindow;
            _alpha = ((1 - _options.DctcpGain) * _alpha) + (_options.DctcpGain * fraction);
            _ackedInWindow = 0;
            _markedInWindow = 0;
            _windowEnd = Math.Max(_highSent, ack + 1);
        }
    }

    /// <summary>
    /// Up to a quarter of the timeout, different for every connection and timeout: flows that lost their windows
    /// together would otherwise time out, resend and lose together again, for ever in a deterministic simulation
    /// (a real stack's timer granularity and differing round-trip estimates keep them apart).
    /// </summary>
    private long Jitter()
    {
        ulong h = (_jitterSeed + ((ulong)Timeouts * 0x9E3779B97F4A7C15UL)) * 0xBF58476D1CE4E5B9UL;
        h ^= h >> 31;
        return (long)((ulong)(_rto / 4) * (h >> 40) >> 24);
    }

    private void SampleRtt(long rtt)
    {
        if (_srtt == 0)
        {
            _srtt = rtt;
            _rttvar = rtt / 2;
        }
        else
        {
            _rttvar = ((3 * _rttvar) + Math.Abs(_srtt - rtt)) / 4;
            _srtt = ((7 * _srtt) + rtt) / 8;
        }
    }
}

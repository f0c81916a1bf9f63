using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>How a transfer ended, for whoever started it.</summary>
public readonly record struct TransferOutcome(bool Ok, string? Error, bool AlreadyStored = false)
{
    public static TransferOutcome Success(bool alreadyStored = false) => new(true, null, alreadyStored);

    public static TransferOutcome Failure(string error) => new(false, error);
}

/// <summary>
/// The sending side of one reliable chunk transfer to another server (the Camdoop paper, §4's chunk store needs the bytes of a
/// chunk moved intact over a torus whose links and queues may drop frames). An Offer announces the chunk; once the
/// receiver accepts, data frames go out within min(receiver window, congestion window); the receiver acknowledges
/// cumulatively (one ack per frame); a gap (duplicate acks) or a silent retransmission timeout sends everything
/// from the last acknowledged byte again (go-back-N), halving the congestion window. The transfer ends with the
/// receiver's Done, sent only once the bytes matched the checksum and, for a replica, were fsynced. Memory:
/// nothing is buffered here; frames are read from the source when (re)sent.
/// </summary>
internal sealed class OutboundTransfer
{
    private readonly ChunkStoreService _service;
    private readonly Action<TransferOutcome> _done;
    private TimerHandle _timer;
    private long _rtoAcked = -1;
    private long _timedOffset = -1;
    private long _timedSentAt;
    private long _recoverUntil = -1;
    private int _dupAcks;
    private double _cwnd;

    public OutboundTransfer(ChunkStoreService service, Coordinate peer, ulong id, TransferPurpose purpose, ChunkMeta meta, IChunkSource source, Action<TransferOutcome> done)
    {
        _service = service;
        Peer = peer;
        Id = id;
        Purpose = purpose;
        Meta = meta;
        Source = source;
        _done = done;
        _cwnd = service.Options.InitialWindowFrames;
        LastProgress = service.Now;
        Rto = service.Options.InitialRetransmitTimeout;
    }

    public Coordinate Peer { get; }

    public ulong Id { get; }

    public TransferPurpose Purpose { get; }

    /// <summary>The service whose queues carry the data frames: the chunk store's, or re-replication's own lane.</summary>
    public byte Lane { get; init; } = WellKnownServices.ChunkStore;

    public ChunkMeta Meta { get; }

    public IChunkSource Source { get; }

    public OutboundState State { get; private set; } = OutboundState.Offering;

    /// <summary>Bytes the receiver has acknowledged.</summary>
    public long Acked { get; private set; }

    /// <summary>Next byte to send.</summary>
    public long Next { get; private set; }

    /// <summary>The receiver's advertised window in bytes.</summary>
    public long Window { get; private set; }

    public long Rto { get; private set; }

    public long LastProgress { get; private set; }

    /// <summary>True while a full queue on some port holds this transfer back (it resumes on send-ready).</summary>
    public bool Blocked { get; set; }

    private double SmoothedRtt { get; set; }

    private double RttVariance { get; set; }

    public void Start()
    {
        _service.SendOffer(this);
        ArmTimer();
    }

    /// <summary>Sends what the windows allow (event loop).</summary>
    public void Pump()
    {
        if (State == OutboundState.Offering)
        {
            return;
        }
        if (State != OutboundState.Sending)
        {
            return;
        }
        long allowed = Acked + (long)Math.Min(Window, Math.Max(1, (int)_cwnd) * (long)ChunkWire.MaxDataBytes);
        while (Next < Meta.Length && Next < allowed)
        {
            int n = (int)Math.Min(ChunkWire.MaxDataBytes, Meta.Length - Next);
            var status = _service.SendData(this, Next, n, out var port);
            if (status == SendStatus.QueueFull)
            {
                _service.WaitForRoom(this, port);
                return;
            }
            if (status != SendStatus.Queued)
            {
                // No route right now (a link or server failed): the timer retries, the stall deadline gives up.
                return;
            }
            if (_timedOffset < 0 && Next >= _recoverUntil)
            {
                _timedOffset = Next + n;
                _timedSentAt = _service.Now;
            }
            Next += n;
        }
    }

    public void OnOfferReply(OfferStatus status, int window)
    {
        if (State != OutboundState.Offering)
        {
            return;
        }
        switch (status)
        {
            case OfferStatus.Accepted:
                State = OutboundState.Sending;
                Window = Math.Max(window, ChunkWire.MaxDataBytes);
                Progress();
                if (Meta.Length == 0)
                {
                    State = OutboundState.Draining;
                }
                Pump();
                break;
            case OfferStatus.AlreadyStored:
                Finish(TransferOutcome.Success(alreadyStored: true));
                break;
            case OfferStatus.Busy:
                // Offer again when the timer fires.
                break;
            case OfferStatus.DiskFull:
                Finish(TransferOutcome.Failure(DiskFullError()));
                break;
            case OfferStatus.Removed:
                Finish(TransferOutcome.Failure($"chunk {Meta.Id} belongs to dataset '{Meta.Dataset}', which was removed"));
                break;
            default:
                Finish(TransferOutcome.Failure($"server {Peer.Name} refused the {Purpose.ToString().ToLowerInvariant()} of chunk {Meta.Id}"));
                break;
        }
    }

    public void OnAck(long next, int window)
    {
        if (State is not (OutboundState.Sending or OutboundState.Draining))
        {
            return;
        }
        if (next > Meta.Length || next > Next)
        {
            _service.Counters.Malformed++;
            return;
        }
        Window = Math.Max(window, ChunkWire.MaxDataBytes);
        if (next > Acked)
        {
            long frames = (next - Acked + ChunkWire.MaxDataBytes - 1) / ChunkWire.MaxDataBytes;
            Acked = next;
            _dupAcks = 0;
            if (_timedOffset >= 0 && next >= _timedOffset)
            {
                SampleRtt(_service.Now - _timedSentAt);
                _timedOffset = -1;
            }
            // Slow start below the threshold of a window's worth, then one frame per window.
            int max = Math.Max(2, (int)(Window / ChunkWire.MaxDataBytes));
            _cwnd = Math.Min(max, _cwnd < _service.Options.SlowStartFrames ? _cwnd + frames : _cwnd + ((double)frames / _cwnd));
            Progress();
            if (Acked == Meta.Length)
            {
                State = OutboundState.Draining;
            }
        }
        else if (next == Acked && Next > Acked)
        {
            // The receiver saw a gap: after two duplicates, go back once per loss episode.
            if (++_dupAcks >= 2 && Acked >= _recoverUntil)
            {
                _service.Counters.FastRetransmits++;
                _recoverUntil = Next;
                _cwnd = Math.Max(2, _cwnd / 2);
                Next = Acked;
                _timedOffset = -1;
                _dupAcks = 0;
            }
        }
        Pump();
    }

    public void OnDone(DoneStatus status)
    {
        switch (status)
        {
            case DoneStatus.Stored:
                Finish(TransferOutcome.Success());
                break;
            case DoneStatus.UnknownTransfer:
                // The receiver lost the transfer (it restarted): start over.
                State = OutboundState.Offering;
                Acked = Next = 0;
                _timedOffset = -1;
                _recoverUntil = -1;
                _cwnd = _service.Options.InitialWindowFrames;
                _service.SendOffer(this);
                break;
            case DoneStatus.ChecksumMismatch:
                Finish(TransferOutcome.Failure($"chunk {Meta.Id} arrived at {Peer.Name} with a wrong checksum"));
                break;
            case DoneStatus.DiskFull:
                Finish(TransferOutcome.Failure(DiskFullError()));
                break;
            default:
                Finish(TransferOutcome.Failure($"server {Peer.Name} could not store chunk {Meta.Id} (a disk error: see its log)"));
                break;
        }
    }

    private string DiskFullError() => $"server {Peer.Name} has no room for chunk {Meta.Id} ({Meta.Length} bytes): its disk is full";

    /// <summary>Ends the transfer without telling the peer (the node stops, or the peer became unreachable).</summary>
    public void Abandon(string reason) => Finish(TransferOutcome.Failure(reason));

    private void OnTimer()
    {
        _timer = default;
        if (State == OutboundState.Finished)
        {
            return;
        }
        long now = _service.Now;
        if (now - LastProgress > _service.Options.StallTimeout)
        {
            string why = _service.IsReachable(Peer) ? "stopped answering" : "is unreachable";
            Finish(TransferOutcome.Failure($"server {Peer.Name} {why} (chunk {Meta.Id}, {Acked} of {Meta.Length} bytes acknowledged)"));
            return;
        }
        if (State == OutboundState.Offering)
        {
            SendOffer();
        }
        else if (Acked == _rtoAcked || State == OutboundState.Draining)
        {
            // Nothing acknowledged for a whole timeout: resend from the last acknowledged byte.
            _service.Counters.Timeouts++;
            _cwnd = 2;
            _recoverUntil = Next;
            _timedOffset = -1;
            Rto = Math.Min(Rto * 2, _service.Options.MaxRetransmitTimeout);
            if (State == OutboundState.Draining)
            {
                // Everything was acknowledged but Done did not come: resend the last frame, which the receiver
                // answers with Done again (or, for an empty chunk, the offer).
                if (Meta.Length == 0)
                {
                    SendOffer();
                }
                else
                {
                    long last = Math.Max(0, Meta.Length - ChunkWire.MaxDataBytes);
                    _service.SendData(this, last, (int)(Meta.Length - last), out _);
                }
            }
            else
            {
                Next = Acked;
                Pump();
            }
        }
        ArmTimer();
    }

    /// <summary>Offers again after a silent timeout, backing off.</summary>
    private void SendOffer()
    {
        _service.SendOffer(this);
        Rto = Math.Min(Rto * 2, _service.Options.MaxRetransmitTimeout);
    }

    private void ArmTimer()
    {
        _rtoAcked = Acked;
        _timer = _service.Context.SetTimer(Rto, OnTimer);
    }

    private void Progress()
    {
        LastProgress = _service.Now;
    }

    private void SampleRtt(long sample)
    {
        // RFC 6298.
        if (SmoothedRtt == 0)
        {
            SmoothedRtt = sample;
            RttVariance = sample / 2.0;
        }
        else
        {
            RttVariance = (0.75 * RttVariance) + (0.25 * Math.Abs(SmoothedRtt - sample));
            SmoothedRtt = (0.875 * SmoothedRtt) + (0.125 * sample);
        }
        var options = _service.Options;
        Rto = Math.Clamp((long)(SmoothedRtt + (4 * RttVariance)), options.MinRetransmitTimeout, options.MaxRetransmitTimeout);
    }

    private void Finish(TransferOutcome outcome)
    {
        if (State == OutboundState.Finished)
        {
            return;
        }
        State = OutboundState.Finished;
        if (_timer.IsSet)
        {
            _service.Context.CancelTimer(_timer);
        }
        Source.Dispose();
        _service.OnOutboundFinished(this, outcome);
        _done(outcome);
    }
}

internal enum OutboundState
{
    Offering,
    Sending,

    /// <summary>Every byte acknowledged; waiting for the receiver's Done.</summary>
    Draining,
    Finished,
}

using Camdoop.Records;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>
/// The receiving side of one chunk transfer: takes data frames strictly in order (a frame past the next expected
/// byte means one was lost: it is dropped and the gap acknowledged at once, so the sender goes back), writes them
/// to the sink, hashes them as they come, acknowledges every frame cumulatively, and when the last byte is in
/// checks the checksum and answers Done: for a replica only once the service has committed it to stable storage
/// (off the loop), so Stored means durable. A finished transfer lingers for a while to answer a sender whose Done
/// got lost.
/// </summary>
internal sealed class InboundTransfer
{
    private readonly ChunkStoreService _service;
    private readonly XxHash64 _hash = new();
    private readonly Action<InboundTransfer>? _onComplete;
    private long _lastAckAt = long.MinValue;
    private long _lastAckValue = -1;

    public InboundTransfer(ChunkStoreService service, Coordinate peer, ulong id, TransferPurpose purpose, ChunkMeta meta, IChunkSink sink, Action<InboundTransfer>? onComplete)
    {
        _service = service;
        Peer = peer;
        Id = id;
        Purpose = purpose;
        Meta = meta;
        Sink = sink;
        _onComplete = onComplete;
        LastActivity = service.Now;
    }

    public Coordinate Peer { get; }

    public ulong Id { get; }

    public TransferPurpose Purpose { get; }

    public ChunkMeta Meta { get; }

    public IChunkSink Sink { get; }

    public long Expected { get; private set; }

    public bool Finished { get; private set; }

    /// <summary>Every byte arrived and checked; the replica is being made durable and the sender waits for Done.</summary>
    public bool Committing { get; private set; }

    public DoneStatus Result { get; private set; }

    public long LastActivity { get; private set; }

    /// <summary>Called right after the receiver accepted: an empty chunk is complete at once.</summary>
    public void Begin()
    {
        if (Meta.Length == 0)
        {
            Complete();
        }
    }

    public void OnData(long offset, ReadOnlySpan<byte> bytes)
    {
        LastActivity = _service.Now;
        if (Finished || Committing)
        {
            _service.Counters.DuplicateFrames++;
            if (Finished)
            {
                _service.SendDone(Peer, Id, Result);
            }
            return;
        }
        if (offset + bytes.Length > Meta.Length || (bytes.Length == 0 && Meta.Length > 0))
        {
            _service.Counters.Malformed++;
            return;
        }
        if (offset != Expected)
        {
            if (offset > Expected)
            {
                _service.Counters.OutOfOrderFrames++;
            }
            else
            {
                _service.Counters.DuplicateFrames++;
            }
            Acknowledge(force: false);
            return;
        }
        try
        {
            Sink.Write(offset, bytes);
        }
        catch (IOException e)
        {
            _service.Context.Log(LogLevel.Error, $"chunk store: writing chunk {Meta.Id} failed: {e.Message}");
            Fail(DoneStatus.StorageError);
            return;
        }
        _hash.Append(bytes);
        Expected += bytes.Length;
        if (Expected == Meta.Length)
        {
            Complete();
        }
        else
        {
            Acknowledge(force: true);
        }
    }

    /// <summary>The sender offered again (its offer reply or our Done got lost).</summary>
    public void OnRepeatedOffer()
    {
        LastActivity = _service.Now;
        if (Finished)
        {
            _service.SendDone(Peer, Id, Result);
        }
        else if (!Committing)
        {
            _service.SendOfferReply(Peer, Id, OfferStatus.Accepted);
        }
    }

    /// <summary>Drops the transfer's partial bytes (the node stops or the transfer went silent).</summary>
    public void Abandon()
    {
        if (!Finished && !Committing)
        {
            Finished = true;
            Result = DoneStatus.UnknownTransfer;
            (Sink as FileChunkSink)?.Abort();
            Sink.Dispose();
            Notify();
        }
    }

    /// <summary>The service finished committing the replica: tell the sender whether it is stored.</summary>
    public void OnCommitted(DoneStatus result)
    {
        Committing = false;
        Finished = true;
        Result = result;
        LastActivity = _service.Now;
        _service.SendDone(Peer, Id, result);
    }

    private void Acknowledge(bool force)
    {
        long now = _service.Now;
        // Duplicate acks for the same point go out at most once per millisecond: enough for the sender to notice
        // the gap without answering every frame of a burst that is being discarded.
        if (!force && Expected == _lastAckValue && now - _lastAckAt < 1_000_000)
        {
            return;
        }
        _lastAckAt = now;
        _lastAckValue = Expected;
        _service.SendAck(Peer, Id, Expected);
    }

    private void Complete()
    {
        if (_hash.GetDigest() != Meta.Checksum)
        {
            _service.Counters.ChecksumMismatches++;
            Fail(DoneStatus.ChecksumMismatch);
            return;
        }
        if (Sink is FileChunkSink)
        {
            // A replica: Done goes out when it is durable (OnCommitted); meanwhile repeats are not answered.
            Committing = true;
            _service.CommitReplica(this);
            return;
        }
        Finished = true;
        Result = DoneStatus.Stored;
        _onComplete?.Invoke(this);
        Sink.Dispose();
        _service.SendDone(Peer, Id, Result);
    }

    private void Fail(DoneStatus status)
    {
        Finished = true;
        Result = status;
        (Sink as FileChunkSink)?.Abort();
        Sink.Dispose();
        Notify();
        _service.SendDone(Peer, Id, status);
    }

    /// <summary>Tells the owner of a failed transfer (a pending read moves on to the next replica).</summary>
    private void Notify()
    {
        try
        {
            _onComplete?.Invoke(this);
        }
        catch (IOException)
        {
            // Nothing was committed for a failed transfer.
        }
    }
}

using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// The transmit side of a raw-Ethernet link that every driver shares (event loop only): the bounded ring of frames
/// waiting for <see cref="IRawEthernetLink.Flush"/> (a <see cref="FrameRing"/>), the MAC addresses stamped on them, the neighbour's learned
/// address, and whether the host is owed a TransmitReady notice. Drivers differ only in how they hand the ring's
/// frames to the kernel.
/// </summary>
internal sealed class TransmitRing
{
    private readonly FrameRing _frames;
    private readonly RawLinkCounters _counters;
    private readonly int _maxFrameSize;
    private bool _readyNoticeOwed;
    private int _lastSendErrno;
    private ulong _peerMac = MacAddress.Broadcast.Value;

    public TransmitRing(int capacity, int maxFrameSize, RawLinkCounters counters)
    {
        _frames = new FrameRing(capacity);
        _maxFrameSize = maxFrameSize;
        _counters = counters;
    }

    public int Count => _frames.Count;

    public bool HasRoom => _frames.Space > 0;

    /// <summary>The neighbour's address as learned from its frames; broadcast until then (any thread may read it).</summary>
    public MacAddress PeerMac => new(Volatile.Read(ref _peerMac));

    /// <summary>
    /// Stamps <paramref name="frame"/> (destination, then <paramref name="localMac"/> as source) and queues it. False
    /// when the ring is full (the host is then owed a notice) or the frame's length is out of bounds (dropped, counted).
    /// </summary>
    public bool TryAdd(Frame frame, MacAddress localMac)
    {
        if (_frames.Space == 0)
        {
            _readyNoticeOwed = true;
            return false;
        }
        int length = frame.Length;
        if (length > _maxFrameSize || length < FrameLayout.EthernetHeaderSize)
        {
            _counters.OversizeDroppedField++;
            return false;
        }
        var span = frame.Buffer.AsSpan();
        // Liveness beacons always go to broadcast: should the neighbour's address change (NIC replaced), its NIC
        // still accepts them and it relearns ours, and we relearn its address from its beacons.
        bool beacon = length > FrameLayout.OffsetService && span[FrameLayout.OffsetService] == WellKnownServices.LinkMonitor;
        (beacon ? MacAddress.Broadcast : new MacAddress(_peerMac)).Write(span);
        localMac.Write(span[6..]);
        _frames.TryEnqueue(frame);
        if (_frames.Space == 0)
        {
            // The host will find CanSend false and stop; it must hear when there is room again.
            _readyNoticeOwed = true;
        }
        return true;
    }

    /// <summary>The frame <paramref name="offset"/> places behind the head (0 is the head); it stays queued.</summary>
    public Frame Peek(int offset) => _frames.Peek(offset);

    public Frame TakeHead() => _frames.Dequeue();

    /// <summary>Counts a batch the kernel accepted (the frames already taken and released).</summary>
    public void RecordSent(long frames, long bytes)
    {
        _counters.AddSent(frames, bytes);
        _lastSendErrno = 0;
    }

    /// <summary>
    /// The kernel refused the head frame with <paramref name="errno"/>. EINTR: try again. EAGAIN (the send buffer is
    /// full): counted, and <paramref name="signal"/> has the I/O thread watch for POLLOUT; the flush must stop (false).
    /// Anything else (interface down or gone, MTU shrunk, queue full) refuses it for good: it is dropped and counted, and
    /// logged through <paramref name="io"/> when the errno differs from the last refusal's (a dead interface would
    /// otherwise log every frame). True when the flush may go on.
    /// </summary>
    public bool OnRefused(int errno, LinkSignal signal, LinkIoThread io)
    {
        if (errno == LibC.EINTR)
        {
            return true;
        }
        if (errno == LibC.EAGAIN)
        {
            _counters.SendBlockedField++;
            signal.AwaitWritable();
            return false;
        }
        var dropped = TakeHead();
        int length = dropped.Length;
        _counters.SendErrorsField++;
        dropped.Release();
        if (errno != _lastSendErrno)
        {
            _lastSendErrno = errno;
            io.Log(LogLevel.Warning, $"dropping a {length}-byte frame the kernel refused: {LibC.Describe(errno)}");
        }
        return true;
    }

    /// <summary>True, once, when the ring had filled up and now has room: the host should hear TransmitReady.</summary>
    public bool TakeReadyNotice()
    {
        if (_readyNoticeOwed && _frames.Space > 0)
        {
            _readyNoticeOwed = false;
            return true;
        }
        return false;
    }

    /// <summary>
    /// Learns the neighbour's address from the source of a frame that passed validation; true when it changed.
    /// Frames the node rejects never get here, so injected garbage cannot redirect our traffic.
    /// </summary>
    public bool LearnPeer(ReadOnlySpan<byte> validFrame, out MacAddress source)
    {
        source = MacAddress.Read(validFrame[6..]);
        if (source.Value == _peerMac || source.IsGroup || source.IsZero)
        {
            return false;
        }
        Volatile.Write(ref _peerMac, source.Value);
        return true;
    }

    /// <summary>Back to broadcast: whatever is plugged in next (after a carrier loss) may have another address.</summary>
    public void ForgetPeer() => Volatile.Write(ref _peerMac, MacAddress.Broadcast.Value);

    /// <summary>Releases every queued frame (the link is being disposed).</summary>
    public void ReleaseAll() => _frames.Flush();
}

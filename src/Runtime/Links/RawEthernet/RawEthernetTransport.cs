using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// One port's link over a real (or veth) Ethernet interface, through an AF_PACKET socket.
/// <para>
/// Receive: an I/O thread owns the socket's receive side. It waits in poll(2), pulls up to
/// <see cref="RawEthernetOptions.ReceiveBatch"/> frames per recvmmsg(2) straight into pooled frame buffers and posts
/// them to the node's event loop; it never looks inside them. The same thread checks the carrier and the kernel's drop
/// counter every <see cref="RawEthernetOptions.CarrierPollInterval"/>.
/// </para>
/// <para>
/// Transmit: the event loop fills a bounded ring (<see cref="CanSend"/>/<see cref="TrySend"/>) while it handles a batch
/// of events and then calls <see cref="Flush"/>, which hands the whole ring to the kernel in one non-blocking
/// sendmmsg(2). So there is no sender thread and no cross-thread hand-off per frame: one system call per loop
/// iteration per busy port, frames released on the thread that owns them. When the kernel's send buffer is full
/// (EAGAIN) the I/O thread adds POLLOUT to its poll and posts <see cref="LinkEventKind.TransmitReady"/> when the socket
/// drains; until then the loop does not retry.
/// </para>
/// MAC addresses are stamped on send: source is the interface's address, destination the neighbour's address learned
/// from its valid frames (broadcast until then, again after a carrier loss, and always for liveness beacons).
/// </summary>
public sealed unsafe class RawEthernetTransport : IRawEthernetLink
{
    private const int MaxReceiveRounds = 8;

    private readonly PacketSocket _socket;
    private readonly FramePool _pool;
    private readonly RawEthernetOptions _options;
    private readonly int _maxFrameSize;
    private readonly int _eventFd;

    // Transmit side: event loop only.
    private readonly Frame?[] _tx;
    private readonly LibC.MMsgHdr* _txMsgs;
    private readonly LibC.IoVec* _txIov;
    private int _txHead;
    private int _txCount;
    private bool _readyNoticeOwed;
    private bool _awaitingWritable;
    private int _lastSendErrno;
    private ulong _peerMac = MacAddress.Broadcast.Value;

    // Receive side: I/O thread only.
    private readonly Frame?[] _rx;
    private readonly LibC.MMsgHdr* _rxMsgs;
    private readonly LibC.IoVec* _rxIov;
    private readonly LibC.SockAddrLl* _rxFrom;
    private int _lastReceiveErrno;
    private bool _ioCarrier;

    private ILinkEventSink? _sink;
    private Thread? _ioThread;
    private volatile bool _stopping;
    private int _wantWritable;
    private int _ioThreadId;
    private long _ioAllocatedBytes;
    private int _disposed;

    private RawEthernetTransport(PacketSocket socket, FramePool pool, RawEthernetOptions options, int eventFd)
    {
        _socket = socket;
        _pool = pool;
        _options = options;
        _maxFrameSize = options.MaxFrameSize;
        _eventFd = eventFd;

        _tx = new Frame?[options.TransmitRingSize];
        _txMsgs = (LibC.MMsgHdr*)NativeMemory.AllocZeroed((nuint)(options.TransmitRingSize * sizeof(LibC.MMsgHdr)));
        _txIov = (LibC.IoVec*)NativeMemory.AllocZeroed((nuint)(options.TransmitRingSize * sizeof(LibC.IoVec)));
        for (int i = 0; i < options.TransmitRingSize; i++)
        {
            _txMsgs[i].Hdr.Iov = &_txIov[i];
            _txMsgs[i].Hdr.IovLen = 1;
        }

        int batch = options.ReceiveBatch;
        _rx = new Frame?[batch];
        _rxMsgs = (LibC.MMsgHdr*)NativeMemory.AllocZeroed((nuint)(batch * sizeof(LibC.MMsgHdr)));
        _rxIov = (LibC.IoVec*)NativeMemory.AllocZeroed((nuint)(batch * sizeof(LibC.IoVec)));
        _rxFrom = (LibC.SockAddrLl*)NativeMemory.AllocZeroed((nuint)(batch * sizeof(LibC.SockAddrLl)));
        for (int i = 0; i < batch; i++)
        {
            _rxMsgs[i].Hdr.Iov = &_rxIov[i];
            _rxMsgs[i].Hdr.IovLen = 1;
            _rxMsgs[i].Hdr.Name = &_rxFrom[i];
        }
        CarrierUp = _ioCarrier = socket.QueryCarrier();
    }

    public LinkDriver Driver => LinkDriver.AfPacket;

    public string InterfaceName => _socket.InterfaceName;

    /// <summary>The port this link serves; set by <see cref="Start"/>.</summary>
    public Port Port { get; private set; }

    public RawLinkCounters Counters { get; } = new();

    public MacAddress LocalMac => _socket.MacAddress;

    /// <summary>The neighbour's address as learned from its frames; broadcast until the first valid frame.</summary>
    public MacAddress PeerMac => new(Volatile.Read(ref _peerMac));

    public int Mtu => _socket.Mtu;

    public int MaxFrameSize => _maxFrameSize;

    public bool IgnoresOutgoingInKernel => _socket.IgnoresOutgoingInKernel;

    /// <summary>Linux thread id of the I/O thread (for CPU accounting from /proc); 0 before it starts.</summary>
    public int IoThreadId => Volatile.Read(ref _ioThreadId);

    /// <summary>Bytes the I/O thread has allocated, sampled at every carrier check and when it exits.</summary>
    public long IoThreadAllocatedBytes => Interlocked.Read(ref _ioAllocatedBytes);

    public bool CanSend => _txCount < _tx.Length;

    /// <summary>The carrier as the event loop last heard of it (changes arrive as <see cref="LinkEventKind.CarrierChanged"/>).</summary>
    public bool CarrierUp { get; private set; }

    /// <summary>
    /// Opens <paramref name="interfaceName"/> in the calling thread's network namespace (use
    /// <see cref="NetworkNamespace.Run{T}"/> to open one in another namespace). Fails with one clear line when the
    /// interface is missing, the process lacks CAP_NET_RAW, or the MTU is too small for the maximum frame size.
    /// </summary>
    public static RawEthernetTransport Open(string interfaceName, FramePool pool, RawEthernetOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(pool);
        options ??= new RawEthernetOptions();
        options.Validate();
        var socket = PacketSocket.Open(
            interfaceName,
            FrameLayout.EtherType,
            options.ReceiveBufferBytes,
            options.SendBufferBytes,
            options.IgnoreOutgoingInKernel);
        int eventFd = -1;
        try
        {
            CheckMtu(socket, options.MaxFrameSize);
            eventFd = LibC.EventFd(0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
            if (eventFd < 0)
            {
                throw new RawEthernetException($"cannot create an eventfd for {interfaceName}: {LibC.Describe(LibC.Errno)}");
            }
            return new RawEthernetTransport(socket, pool, options, eventFd);
        }
        catch
        {
            if (eventFd >= 0)
            {
                LibC.Close(eventFd);
            }
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Starts the I/O thread, which posts this link's events for <paramref name="port"/> to <paramref name="sink"/>.</summary>
    public void Start(Port port, ILinkEventSink sink)
    {
        ArgumentNullException.ThrowIfNull(sink);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        if (_ioThread is not null)
        {
            throw new InvalidOperationException($"link {InterfaceName} is already started");
        }
        Port = port;
        _sink = sink;
        _ioThread = new Thread(IoThreadMain)
        {
            IsBackground = true,
            Name = $"link {port.Name()} {InterfaceName}",
        };
        _ioThread.Start();
    }

    // ---------------------------------------------------------------- transmit (event loop)

    public bool TrySend(Frame frame)
    {
        if (_txCount == _tx.Length)
        {
            _readyNoticeOwed = true;
            return false;
        }
        int length = frame.Length;
        if (length > _maxFrameSize || length < FrameLayout.EthernetHeaderSize)
        {
            Counters.OversizeDroppedField++;
            return false;
        }
        var span = frame.Buffer.AsSpan();
        // Liveness beacons always go to broadcast: should the neighbour's address change (NIC replaced), its NIC
        // still accepts them and it relearns ours, and we relearn its address from its beacons.
        bool beacon = length > FrameLayout.OffsetService && span[FrameLayout.OffsetService] == WellKnownServices.LinkMonitor;
        (beacon ? MacAddress.Broadcast : new MacAddress(_peerMac)).Write(span);
        _socket.MacAddress.Write(span[6..]);
        int tail = _txHead + _txCount;
        if (tail >= _tx.Length)
        {
            tail -= _tx.Length;
        }
        _tx[tail] = frame;
        _txCount++;
        if (_txCount == _tx.Length)
        {
            // The host will find CanSend false and stop; it must hear when there is room again.
            _readyNoticeOwed = true;
        }
        return true;
    }

    /// <summary>Frames waiting in the transmit ring.</summary>
    public int PendingTransmit => _txCount;

    /// <summary>
    /// Hands the transmit ring to the kernel. Called by the event loop after each batch of events. Returns true when
    /// the ring had filled up and now has room, i.e. the host should be told <see cref="ILinkEvents.OnTransmitReady"/>.
    /// </summary>
    public bool Flush()
    {
        if (_awaitingWritable || _disposed != 0)
        {
            return false;
        }
        while (_txCount > 0)
        {
            int n = _txCount;
            int cap = _tx.Length;
            for (int i = 0, slot = _txHead; i < n; i++)
            {
                var f = _tx[slot]!;
                _txIov[i].Base = BufferAddress(f);
                _txIov[i].Length = (nuint)f.Length;
                if (++slot == cap)
                {
                    slot = 0;
                }
            }
            int sent = LibC.SendMMsg(_socket.Fd, _txMsgs, (uint)n, LibC.MSG_DONTWAIT);
            if (sent > 0)
            {
                long bytes = 0;
                for (int i = 0; i < sent; i++)
                {
                    var f = TakeHead();
                    bytes += f.Length;
                    f.Release();
                }
                Volatile.Write(ref Counters.FramesSentField, Counters.FramesSentField + sent);
                Volatile.Write(ref Counters.BytesSentField, Counters.BytesSentField + bytes);
                Volatile.Write(ref Counters.SendBatchesField, Counters.SendBatchesField + 1);
                _lastSendErrno = 0;
                continue;
            }
            int errno = LibC.Errno;
            if (errno == LibC.EINTR)
            {
                continue;
            }
            if (errno == LibC.EAGAIN)
            {
                // The send buffer is full: stop until the I/O thread sees POLLOUT.
                _awaitingWritable = true;
                Counters.SendBlockedField++;
                Volatile.Write(ref _wantWritable, 1);
                Signal();
                break;
            }
            // The head frame was refused for good (interface down or gone, MTU shrunk, qdisc full): drop it.
            var dropped = TakeHead();
            Counters.SendErrorsField++;
            if (errno != _lastSendErrno)
            {
                _lastSendErrno = errno;
                _sink?.Log(LogLevel.Warning, $"link {Port.Name()} {InterfaceName}: dropping a {dropped.Length}-byte frame the kernel refused: {LibC.Describe(errno)}");
            }
            dropped.Release();
        }
        if (_readyNoticeOwed && _txCount < _tx.Length)
        {
            _readyNoticeOwed = false;
            return true;
        }
        return false;
    }

    /// <summary>The I/O thread reported the socket writable again (event loop).</summary>
    public void OnWritable() => _awaitingWritable = false;

    /// <summary>The event loop learned of a carrier change from this link's I/O thread.</summary>
    public void ApplyCarrier(bool up)
    {
        CarrierUp = up;
        if (!up)
        {
            // Whatever is plugged in next may have another address: go back to broadcast until we hear from it.
            Volatile.Write(ref _peerMac, MacAddress.Broadcast.Value);
        }
    }

    /// <summary>
    /// Learns the neighbour's MAC address from a frame that passed validation (event loop). Frames the node rejects
    /// never teach us an address, so injected garbage cannot redirect our traffic.
    /// </summary>
    public void LearnPeer(ReadOnlySpan<byte> validFrame)
    {
        var source = MacAddress.Read(validFrame[6..]);
        if (source.Value == _peerMac || source.IsGroup || source.IsZero)
        {
            return;
        }
        Volatile.Write(ref _peerMac, source.Value);
        _sink?.Log(LogLevel.Info, $"link {Port.Name()} {InterfaceName}: neighbour is {source}");
    }

    private Frame TakeHead()
    {
        var f = _tx[_txHead]!;
        _tx[_txHead] = null;
        _txHead = _txHead + 1 == _tx.Length ? 0 : _txHead + 1;
        _txCount--;
        return f;
    }

    // ---------------------------------------------------------------- receive and carrier (I/O thread)

    private void IoThreadMain()
    {
        Volatile.Write(ref _ioThreadId, LibC.GetTid());
        var sink = _sink!;
        int batch = _rx.Length;
        for (int i = 0; i < batch; i++)
        {
            AssignReceiveSlot(i, _pool.Rent());
        }
        long interval = (long)(_options.CarrierPollInterval.TotalSeconds * Stopwatch.Frequency);
        long nextCheck = Stopwatch.GetTimestamp() + interval;
        LibC.PollFd* fds = stackalloc LibC.PollFd[2];
        int idleErrors = 0;
        try
        {
            while (!_stopping)
            {
                long now = Stopwatch.GetTimestamp();
                if (now >= nextCheck)
                {
                    CheckLink(sink);
                    nextCheck = now + interval;
                }
                int timeoutMs = (int)Math.Max(1, (nextCheck - now) * 1000 / Stopwatch.Frequency);
                fds[0] = new LibC.PollFd { Fd = _socket.Fd, Events = (short)(LibC.POLLIN | (Volatile.Read(ref _wantWritable) != 0 ? LibC.POLLOUT : 0)) };
                fds[1] = new LibC.PollFd { Fd = _eventFd, Events = LibC.POLLIN };
                int ready = LibC.Poll(fds, 2, timeoutMs);
                if (ready <= 0)
                {
                    if (ready < 0 && LibC.Errno != LibC.EINTR)
                    {
                        sink.Log(LogLevel.Error, $"link {Port.Name()} {InterfaceName}: poll failed: {LibC.Describe(LibC.Errno)}");
                        Thread.Sleep(10);
                    }
                    continue;
                }
                if ((fds[1].REvents & LibC.POLLIN) != 0)
                {
                    ulong drain;
                    LibC.Read(_eventFd, &drain, sizeof(ulong));
                }
                short events = fds[0].REvents;
                if ((events & LibC.POLLNVAL) != 0)
                {
                    break;
                }
                if ((events & LibC.POLLERR) != 0)
                {
                    // For example ENETDOWN when the interface vanished; the carrier check reports the consequence.
                    int error = _socket.TakeError();
                    if (error != 0 && error != _lastReceiveErrno)
                    {
                        _lastReceiveErrno = error;
                        sink.Log(LogLevel.Warning, $"link {Port.Name()} {InterfaceName}: socket error {LibC.Describe(error)}");
                    }
                    if ((events & LibC.POLLIN) == 0 && ++idleErrors > 100)
                    {
                        Thread.Sleep(1);
                    }
                }
                else
                {
                    idleErrors = 0;
                }
                if ((events & LibC.POLLIN) != 0)
                {
                    ReceiveBurst(sink);
                }
                if ((events & LibC.POLLOUT) != 0 && Interlocked.CompareExchange(ref _wantWritable, 0, 1) == 1)
                {
                    Post(sink, LinkEvent.TransmitReady(Port));
                    sink.Wake();
                }
            }
        }
#pragma warning disable CA1031 // a bug here must not take the server down: the link is reported dead instead
        catch (Exception ex)
#pragma warning restore CA1031
        {
            sink.Log(LogLevel.Error, $"link {Port.Name()} {InterfaceName}: I/O thread failed, link abandoned: {ex}");
            if (_ioCarrier)
            {
                Post(sink, LinkEvent.Carrier(Port, false));
                sink.Wake();
            }
        }
        finally
        {
            for (int i = 0; i < batch; i++)
            {
                _rx[i]?.Release();
                _rx[i] = null;
            }
            Interlocked.Exchange(ref _ioAllocatedBytes, GC.GetAllocatedBytesForCurrentThread());
        }
    }

    private void ReceiveBurst(ILinkEventSink sink)
    {
        int batch = _rx.Length;
        for (int round = 0; round < MaxReceiveRounds && !_stopping; round++)
        {
            for (int i = 0; i < batch; i++)
            {
                _rxMsgs[i].Hdr.NameLen = (uint)sizeof(LibC.SockAddrLl);
                _rxMsgs[i].Hdr.Flags = 0;
            }
            // MSG_TRUNC: report a frame's real length even when it overflows the buffer, so it is rejected as oversize.
            int n = LibC.RecvMMsg(_socket.Fd, _rxMsgs, (uint)batch, LibC.MSG_DONTWAIT | LibC.MSG_TRUNC, null);
            if (n <= 0)
            {
                int errno = n < 0 ? LibC.Errno : 0;
                if (errno is not 0 and not LibC.EAGAIN and not LibC.EINTR && errno != _lastReceiveErrno)
                {
                    _lastReceiveErrno = errno;
                    sink.Log(LogLevel.Warning, $"link {Port.Name()} {InterfaceName}: receive failed: {LibC.Describe(errno)}");
                }
                return;
            }
            long frames = 0;
            long bytes = 0;
            for (int i = 0; i < n; i++)
            {
                if (_rxFrom[i].PktType == LibC.PACKET_OUTGOING)
                {
                    // Our own transmission (kernels without PACKET_IGNORE_OUTGOING): the slot keeps its buffer.
                    Volatile.Write(ref Counters.OwnFramesIgnoredField, Counters.OwnFramesIgnoredField + 1);
                    continue;
                }
                int length = (int)_rxMsgs[i].Len;
                var frame = _rx[i]!;
                frame.Length = Math.Min(length, FrameLayout.BufferSize);
                frames++;
                bytes += length;
                AssignReceiveSlot(i, _pool.Rent());
                if (!Post(sink, LinkEvent.Received(Port, frame)))
                {
                    frame.Release();
                }
            }
            Volatile.Write(ref Counters.FramesReceivedField, Counters.FramesReceivedField + frames);
            Volatile.Write(ref Counters.BytesReceivedField, Counters.BytesReceivedField + bytes);
            Volatile.Write(ref Counters.ReceiveBatchesField, Counters.ReceiveBatchesField + 1);
            if (frames > 0)
            {
                sink.Wake();
            }
            if (n < batch)
            {
                return;
            }
        }
    }

    /// <summary>Posts to the loop, waiting while its inbox is full (the kernel's buffer absorbs the burst meanwhile).</summary>
    private bool Post(ILinkEventSink sink, in LinkEvent linkEvent)
    {
        if (sink.TryPost(linkEvent))
        {
            return true;
        }
        Volatile.Write(ref Counters.InboxStallsField, Counters.InboxStallsField + 1);
        sink.Wake();
        var spin = default(SpinWait);
        while (!sink.TryPost(linkEvent))
        {
            if (_stopping)
            {
                return false;
            }
            spin.SpinOnce(sleep1Threshold: 30);
        }
        return true;
    }

    private void CheckLink(ILinkEventSink sink)
    {
        bool up = _socket.QueryCarrier();
        if (up && _socket.Mtu + FrameLayout.EthernetHeaderSize < _maxFrameSize)
        {
            // The interface came back (or was changed) with too small an MTU: unusable, so report it as down.
            up = false;
        }
        if (up != _ioCarrier)
        {
            _ioCarrier = up;
            sink.Log(up ? LogLevel.Info : LogLevel.Warning, $"link {Port.Name()} {InterfaceName}: carrier {(up ? "up" : "down")}");
            Post(sink, LinkEvent.Carrier(Port, up));
            sink.Wake();
        }
        ReadKernelStatistics();
        Interlocked.Exchange(ref _ioAllocatedBytes, GC.GetAllocatedBytesForCurrentThread());
    }

    private void ReadKernelStatistics()
    {
        var (_, drops) = _socket.ReadStatistics();
        if (drops > 0)
        {
            Interlocked.Add(ref Counters.KernelDropsField, drops);
        }
    }

    private void AssignReceiveSlot(int i, Frame frame)
    {
        _rx[i] = frame;
        _rxIov[i].Base = BufferAddress(frame);
        _rxIov[i].Length = (nuint)frame.Buffer.Length;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* BufferAddress(Frame frame) =>
        (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(frame.Buffer)); // pinned-heap buffer

    private void Signal()
    {
        ulong one = 1;
        LibC.Write(_eventFd, &one, sizeof(ulong));
    }

    private static void CheckMtu(PacketSocket socket, int maxFrameSize)
    {
        int needed = maxFrameSize - FrameLayout.EthernetHeaderSize;
        if (socket.Mtu < needed)
        {
            throw new RawEthernetException(
                $"interface {socket.InterfaceName} has MTU {socket.Mtu}, but {maxFrameSize}-byte frames need MTU {needed} or more " +
                $"(ip link set dev {socket.InterfaceName} mtu {needed}, or configure a smaller maximum frame size)");
        }
    }

    // ---------------------------------------------------------------- lifetime

    /// <summary>Stops and joins the I/O thread. The socket stays open so that the loop can still flush. Idempotent.</summary>
    public void Stop()
    {
        _stopping = true;
        var thread = _ioThread;
        if (thread is not null && thread != Thread.CurrentThread)
        {
            Signal();
            thread.Join();
        }
        ReadKernelStatistics();
    }

    /// <summary>
    /// Stops the I/O thread, drops whatever is left in the transmit ring and closes the socket. Call it after the
    /// event loop has stopped using the link.
    /// </summary>
    public void Dispose()
    {
        if (_disposed != 0)
        {
            return;
        }
        Stop();
        _disposed = 1;
        while (_txCount > 0)
        {
            TakeHead().Release();
        }
        _socket.Dispose();
        LibC.Close(_eventFd);
        NativeMemory.Free(_txMsgs);
        NativeMemory.Free(_txIov);
        NativeMemory.Free(_rxMsgs);
        NativeMemory.Free(_rxIov);
        NativeMemory.Free(_rxFrom);
    }

    public override string ToString() => $"{InterfaceName} ({LocalMac}, MTU {Mtu}) -> {PeerMac}";
}

using System.Runtime.InteropServices;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
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
/// <para>
/// What every driver does alike lives in <see cref="TransmitRing"/>, <see cref="LinkIoThread"/> and
/// <see cref="LinkSignal"/>; this class keeps what is particular to AF_PACKET.
/// </para>
/// </summary>
public sealed unsafe class RawEthernetTransport : IRawEthernetLink
{
    private const int MaxReceiveRounds = 8;

    private readonly PacketSocket _socket;
    private readonly FramePool _pool;
    private readonly int _maxFrameSize;
    private readonly LinkSignal _signal;
    private readonly LinkIoThread _io;

    // Transmit side: event loop only.
    private readonly TransmitRing _ring;
    private readonly LibC.MMsgHdr* _txMsgs;
    private readonly LibC.IoVec* _txIov;

    // Receive side: I/O thread only.
    private readonly Frame?[] _rx;
    private readonly LibC.MMsgHdr* _rxMsgs;
    private readonly LibC.IoVec* _rxIov;
    private readonly LibC.SockAddrLl* _rxFrom;
    private int _lastReceiveErrno;

    private int _disposed;

    private RawEthernetTransport(PacketSocket socket, FramePool pool, RawEthernetOptions options, LinkSignal signal)
    {
        _socket = socket;
        _pool = pool;
        _maxFrameSize = options.MaxFrameSize;
        _signal = signal;

        _ring = new TransmitRing(options.TransmitRingSize, options.MaxFrameSize, Counters);
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
        CarrierUp = socket.QueryCarrier();
        _io = new LinkIoThread(socket.InterfaceName, Counters, signal, options.CarrierPollInterval, CarrierUp);
    }

    public LinkDriver Driver => LinkDriver.AfPacket;

    public string InterfaceName => _socket.InterfaceName;

    /// <summary>The port this link serves; set by <see cref="Start"/>.</summary>
    public Port Port => _io.Port;

    public RawLinkCounters Counters { get; } = new();

    public MacAddress LocalMac => _socket.MacAddress;

    /// <summary>The neighbour's address as learned from its frames; broadcast until the first valid frame.</summary>
    public MacAddress PeerMac => _ring.PeerMac;

    public int Mtu => _socket.Mtu;

    public int MaxFrameSize => _maxFrameSize;

    public bool IgnoresOutgoingInKernel => _socket.IgnoresOutgoingInKernel;

    /// <summary>Linux thread id of the I/O thread (for CPU accounting from /proc); 0 before it starts.</summary>
    public int IoThreadId => _io.ThreadId;

    /// <summary>Bytes the I/O thread has allocated, sampled at every carrier check and when it exits.</summary>
    public long IoThreadAllocatedBytes => _io.AllocatedBytes;

    public bool CanSend => _ring.HasRoom;

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
        LinkSignal? signal = null;
        try
        {
            LinkMtu.Require(socket.InterfaceName, socket.Mtu, options.MaxFrameSize);
            signal = LinkSignal.Create(interfaceName);
            return new RawEthernetTransport(socket, pool, options, signal);
        }
        catch
        {
            signal?.Dispose();
            socket.Dispose();
            throw;
        }
    }

    /// <summary>Starts the I/O thread, which posts this link's events for <paramref name="port"/> to <paramref name="sink"/>.</summary>
    public void Start(Port port, ILinkEventSink sink)
    {
        ArgumentNullException.ThrowIfNull(sink);
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        _io.Start(port, sink, "link", IoThreadMain);
    }

    // ---------------------------------------------------------------- transmit (event loop)

    public bool TrySend(Frame frame) => _ring.TryAdd(frame, _socket.MacAddress);

    /// <summary>Frames waiting in the transmit ring.</summary>
    public int PendingTransmit => _ring.Count;

    /// <summary>
    /// Hands the transmit ring to the kernel in sendmmsg(2) batches. Called by the event loop after each batch of
    /// events. Returns true when the ring had filled up and now has room, i.e. the host should be told
    /// <see cref="ILinkEvents.OnTransmitReady"/>.
    /// </summary>
    public bool Flush()
    {
        if (_signal.AwaitingWritable || _disposed != 0)
        {
            return false;
        }
        while (_ring.Count > 0)
        {
            int n = _ring.Count;
            for (int i = 0; i < n; i++)
            {
                var f = _ring.Peek(i);
                _txIov[i].Base = PinnedFrame.Address(f);
                _txIov[i].Length = (nuint)f.Length;
            }
            int sent = LibC.SendMMsg(_socket.Fd, _txMsgs, (uint)n, LibC.MSG_DONTWAIT);
            if (sent > 0)
            {
                long bytes = 0;
                for (int i = 0; i < sent; i++)
                {
                    var f = _ring.TakeHead();
                    bytes += f.Length;
                    f.Release();
                }
                _ring.RecordSent(sent, bytes);
                continue;
            }
            if (!_ring.OnRefused(LibC.Errno, _signal, _io))
            {
                break; // the send buffer is full: stop until the I/O thread sees POLLOUT
            }
        }
        return _ring.TakeReadyNotice();
    }

    /// <summary>The I/O thread reported the socket writable again (event loop).</summary>
    public void OnWritable() => _signal.OnWritable();

    /// <summary>The event loop learned of a carrier change from this link's I/O thread.</summary>
    public void ApplyCarrier(bool up)
    {
        CarrierUp = up;
        if (!up)
        {
            _ring.ForgetPeer();
        }
    }

    /// <summary>Learns the neighbour's MAC address from a frame that passed validation (event loop).</summary>
    public void LearnPeer(ReadOnlySpan<byte> validFrame)
    {
        if (_ring.LearnPeer(validFrame, out var source))
        {
            _io.Log(LogLevel.Info, $"neighbour is {source}");
        }
    }

    // ---------------------------------------------------------------- receive and carrier (I/O thread)

    private void IoThreadMain()
    {
        int batch = _rx.Length;
        for (int i = 0; i < batch; i++)
        {
            AssignReceiveSlot(i, _pool.Rent());
        }
        int idleErrors = 0;
        try
        {
            while (!_io.Stopping)
            {
                if (_io.IsCheckDue(out int timeoutMs))
                {
                    CheckLink();
                }
                short events = _io.Wait(_socket.Fd, timeoutMs);
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
                        _io.Log(LogLevel.Warning, $"socket error {LibC.Describe(error)}");
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
                    ReceiveBurst();
                }
                if ((events & LibC.POLLOUT) != 0)
                {
                    _io.ReportWritable();
                }
            }
        }
        finally
        {
            for (int i = 0; i < batch; i++)
            {
                _rx[i]?.Release();
                _rx[i] = null;
            }
        }
    }

    private void ReceiveBurst()
    {
        int batch = _rx.Length;
        for (int round = 0; round < MaxReceiveRounds && !_io.Stopping; round++)
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
                    _io.Log(LogLevel.Warning, $"receive failed: {LibC.Describe(errno)}");
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
                if (!_io.Post(LinkEvent.Received(Port, frame)))
                {
                    frame.Release();
                }
            }
            Counters.AddReceived(frames, bytes);
            if (frames > 0)
            {
                _io.Wake();
            }
            if (n < batch)
            {
                return;
            }
        }
    }

    private void CheckLink()
    {
        // An interface that came back (or was changed) with too small an MTU is unusable: report it as down.
        bool up = _socket.QueryCarrier() && LinkMtu.Fits(_socket.Mtu, _maxFrameSize);
        _io.ReportCarrier(up);
        ReadKernelStatistics();
        _io.SampleAllocatedBytes();
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
        _rxIov[i].Base = PinnedFrame.Address(frame);
        _rxIov[i].Length = (nuint)frame.Buffer.Length;
    }

    // ---------------------------------------------------------------- lifetime

    /// <summary>Stops and joins the I/O thread. The socket stays open so that the loop can still flush. Idempotent.</summary>
    public void Stop()
    {
        _io.Stop();
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
        _ring.ReleaseAll();
        _socket.Dispose();
        _signal.Dispose();
        NativeMemory.Free(_txMsgs);
        NativeMemory.Free(_txIov);
        NativeMemory.Free(_rxMsgs);
        NativeMemory.Free(_rxIov);
        NativeMemory.Free(_rxFrom);
    }

    public override string ToString() => $"{InterfaceName} ({LocalMac}, MTU {Mtu}) -> {PeerMac}";
}

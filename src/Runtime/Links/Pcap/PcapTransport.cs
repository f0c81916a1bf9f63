using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Microsoft.Win32.SafeHandles;

namespace Camdoop.Runtime.Links.Pcap;

/// <summary>
/// One port's link over a real (or veth) Ethernet interface through libpcap (SharpPcap), with the same contract as
/// <see cref="RawEthernetTransport"/> (see <see cref="IRawEthernetLink"/>).
/// <para>
/// Receive: an I/O thread owns the capture handle (<see cref="PcapCapture"/>: immediate mode, BPF filter on the
/// CamCube EtherType, inbound only). It waits in poll(2) on the handle's descriptor and an eventfd, then takes frames
/// with SharpPcap's <c>GetNextPacketPointers</c> (pcap_next_ex, non-blocking, nothing allocated) and copies each into
/// a pooled frame that it posts to the node's event loop. Frames whose source is our own address are dropped and
/// counted (<see cref="RawLinkCounters.OwnFramesIgnored"/>), a third guard after pcap_setdirection and
/// PACKET_IGNORE_OUTGOING. Every <see cref="RawEthernetOptions.CarrierPollInterval"/> the same thread checks the
/// carrier, the MTU and libpcap's drop counter, and reopens the handle when the interface was deleted and created
/// again (the thread runs in the link's network namespace, so it can).
/// </para>
/// <para>
/// Transmit: the event loop fills a bounded ring and <see cref="Flush"/> injects it frame by frame (pcap_inject on the
/// handle's non-blocking socket; on Linux that is one send(2) and touches nothing the I/O thread uses). When the
/// kernel's send buffer is full the I/O thread adds POLLOUT to its poll and posts
/// <see cref="LinkEventKind.TransmitReady"/> once it drains. A lock taken once per flush keeps the I/O thread from
/// replacing the handle under a send.
/// </para>
/// </summary>
public sealed unsafe class PcapTransport : IRawEthernetLink
{
    private const string NamespacePath = "/proc/thread-self/ns/net";
    private const int MaxReceiveRounds = 8;

    private readonly FramePool _pool;
    private readonly RawEthernetOptions _options;
    private readonly int _maxFrameSize;
    private readonly InterfaceQuery _query;
    private readonly SafeFileHandle _namespace;
    private readonly string? _namespaceId;
    private readonly int _eventFd;
    private readonly Lock _captureLock = new();

    // Replaced only by the I/O thread (under _captureLock); null while the interface is gone.
    private PcapCapture? _capture;
    private int _ifIndex;
    private long _mac;
    private volatile int _mtu;

    // Transmit side: event loop only.
    private readonly Frame?[] _tx;
    private int _txHead;
    private int _txCount;
    private bool _readyNoticeOwed;
    private bool _awaitingWritable;
    private int _lastSendErrno;
    private ulong _peerMac = MacAddress.Broadcast.Value;

    // Receive side: I/O thread only.
    private bool _ioCarrier;
    private string? _lastReceiveError;
    private string? _lastReopenError;

    private ILinkEventSink? _sink;
    private Thread? _ioThread;
    private volatile bool _stopping;
    private int _wantWritable;
    private int _ioThreadId;
    private long _ioAllocatedBytes;
    private int _disposed;

    private PcapTransport(string interfaceName, FramePool pool, RawEthernetOptions options, InterfaceQuery query, PcapCapture capture,
                          int index, MacAddress mac, int mtu, SafeFileHandle ns, string? namespaceId, int eventFd)
    {
        InterfaceName = interfaceName;
        _pool = pool;
        _options = options;
        _maxFrameSize = options.MaxFrameSize;
        _query = query;
        _capture = capture;
        _ifIndex = index;
        _mac = (long)mac.Value;
        _mtu = mtu;
        _namespace = ns;
        _namespaceId = namespaceId;
        _eventFd = eventFd;
        IgnoresOutgoingInKernel = capture.IgnoresOutgoingInKernel;
        _tx = new Frame?[options.TransmitRingSize];
        CarrierUp = _ioCarrier = query.IsUpAndRunning();
    }

    public LinkDriver Driver => LinkDriver.Pcap;

    public string InterfaceName { get; }

    public Port Port { get; private set; }

    public RawLinkCounters Counters { get; } = new();

    public MacAddress LocalMac => new((ulong)Volatile.Read(ref _mac));

    public MacAddress PeerMac => new(Volatile.Read(ref _peerMac));

    public int Mtu => _mtu;

    public int MaxFrameSize => _maxFrameSize;

    /// <summary>Whether the kernel drops this host's own outgoing frames before they reach the capture socket.</summary>
    public bool IgnoresOutgoingInKernel { get; private set; }

    public int IoThreadId => Volatile.Read(ref _ioThreadId);

    public long IoThreadAllocatedBytes => Interlocked.Read(ref _ioAllocatedBytes);

    public bool CanSend => _txCount < _tx.Length;

    public bool CarrierUp { get; private set; }

    public int PendingTransmit => _txCount;

    /// <summary>Null when libpcap can be loaded, else one line saying how to install it.</summary>
    public static string? WhyUnavailable() => LibPcap.WhyUnavailable();

    /// <summary>
    /// Opens <paramref name="interfaceName"/> in the calling thread's network namespace (use
    /// <see cref="NetworkNamespace.Run{T}"/> to open one in another namespace; the link's I/O thread joins that
    /// namespace). Fails with one clear line when libpcap is not installed, the interface is missing, the process
    /// lacks CAP_NET_RAW, or the MTU is too small for the maximum frame size.
    /// </summary>
    public static PcapTransport Open(string interfaceName, FramePool pool, RawEthernetOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(pool);
        options ??= new RawEthernetOptions();
        options.Validate();
        if (!OperatingSystem.IsLinux())
        {
            throw new RawEthernetException("raw Ethernet links need Linux");
        }
        if (LibPcap.WhyUnavailable() is { } why)
        {
            throw new RawEthernetException(why);
        }
        var query = InterfaceQuery.Open(interfaceName);
        PcapCapture? capture = null;
        SafeFileHandle? ns = null;
        int eventFd = -1;
        try
        {
            int index = query.Index(out int errno);
            if (index <= 0)
            {
                throw errno == LibC.ENODEV
                    ? new RawEthernetException($"network interface {interfaceName} does not exist (in this network namespace)") { Errno = errno }
                    : new RawEthernetException($"cannot look up network interface {interfaceName}: {LibC.Describe(errno)}") { Errno = errno };
            }
            int mtu = query.Mtu();
            var mac = query.Mac() ?? throw new RawEthernetException($"cannot read the MAC address of {interfaceName}");
            CheckMtu(interfaceName, mtu, options.MaxFrameSize);
            capture = PcapCapture.Open(interfaceName, options);
            ns = File.OpenHandle(NamespacePath);
            eventFd = LibC.EventFd(0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
            if (eventFd < 0)
            {
                throw new RawEthernetException($"cannot create an eventfd for {interfaceName}: {LibC.Describe(LibC.Errno)}");
            }
            return new PcapTransport(interfaceName, pool, options, query, capture, index, mac, mtu, ns, CurrentNamespaceId(), eventFd);
        }
        catch
        {
            if (eventFd >= 0)
            {
                LibC.Close(eventFd);
            }
            ns?.Dispose();
            capture?.Dispose();
            query.Dispose();
            throw;
        }
    }

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
            Name = $"pcap {port.Name()} {InterfaceName}",
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
        // Liveness beacons always go to broadcast (see RawEthernetTransport.TrySend).
        bool beacon = length > FrameLayout.OffsetService && span[FrameLayout.OffsetService] == WellKnownServices.LinkMonitor;
        (beacon ? MacAddress.Broadcast : new MacAddress(_peerMac)).Write(span);
        LocalMac.Write(span[6..]);
        int tail = _txHead + _txCount;
        if (tail >= _tx.Length)
        {
            tail -= _tx.Length;
        }
        _tx[tail] = frame;
        _txCount++;
        if (_txCount == _tx.Length)
        {
            _readyNoticeOwed = true;
        }
        return true;
    }

    public bool Flush()
    {
        if (_awaitingWritable || _disposed != 0)
        {
            return false;
        }
        if (_txCount == 0)
        {
            return TakeReadyNotice();
        }
        long frames = 0;
        long bytes = 0;
        lock (_captureLock)
        {
            nint pcap = _capture?.Pcap ?? 0;
            while (_txCount > 0)
            {
                var f = _tx[_txHead]!;
                int errno;
                if (pcap == 0)
                {
                    errno = LibC.ENODEV; // the interface is gone; the carrier check reports the link down
                }
                else if (LibPcap.Inject(pcap, BufferAddress(f), f.Length, out errno) >= 0)
                {
                    TakeHead();
                    frames++;
                    bytes += f.Length;
                    f.Release();
                    continue;
                }
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
                // Refused for good (interface down or gone, MTU shrunk, queue full): drop it.
                TakeHead();
                Counters.SendErrorsField++;
                if (errno != _lastSendErrno)
                {
                    _lastSendErrno = errno;
                    _sink?.Log(LogLevel.Warning, $"link {Port.Name()} {InterfaceName}: dropping a {f.Length}-byte frame the kernel refused: {LibC.Describe(errno)}");
                }
                f.Release();
            }
        }
        if (frames > 0)
        {
            Volatile.Write(ref Counters.FramesSentField, Counters.FramesSentField + frames);
            Volatile.Write(ref Counters.BytesSentField, Counters.BytesSentField + bytes);
            Volatile.Write(ref Counters.SendBatchesField, Counters.SendBatchesField + 1);
            _lastSendErrno = 0;
        }
        return TakeReadyNotice();
    }

    public void OnWritable() => _awaitingWritable = false;

    public void ApplyCarrier(bool up)
    {
        CarrierUp = up;
        if (!up)
        {
            // Whatever is plugged in next may have another address: go back to broadcast until we hear from it.
            Volatile.Write(ref _peerMac, MacAddress.Broadcast.Value);
        }
    }

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

    private bool TakeReadyNotice()
    {
        if (_readyNoticeOwed && _txCount < _tx.Length)
        {
            _readyNoticeOwed = false;
            return true;
        }
        return false;
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
        long interval = (long)(_options.CarrierPollInterval.TotalSeconds * Stopwatch.Frequency);
        long nextCheck = Stopwatch.GetTimestamp() + interval;
        LibC.PollFd* fds = stackalloc LibC.PollFd[2];
        int idleErrors = 0;
        try
        {
            EnterLinkNamespace();
            while (!_stopping)
            {
                long now = Stopwatch.GetTimestamp();
                if (now >= nextCheck)
                {
                    CheckLink(sink);
                    nextCheck = now + interval;
                }
                var capture = _capture;
                int timeoutMs = (int)Math.Max(1, (nextCheck - now) * 1000 / Stopwatch.Frequency);
                bool wantWritable = Volatile.Read(ref _wantWritable) != 0;
                fds[0] = new LibC.PollFd { Fd = capture?.Fd ?? -1, Events = (short)(LibC.POLLIN | (wantWritable ? LibC.POLLOUT : 0)) };
                fds[1] = new LibC.PollFd { Fd = _eventFd, Events = LibC.POLLIN };
                int ready = LibC.Poll(fds, 2, timeoutMs);
                if (capture is null)
                {
                    if (Interlocked.CompareExchange(ref _wantWritable, 0, 1) == 1)
                    {
                        // No handle to wait for (the interface is gone): let the loop flush, and so drop, what it holds.
                        Post(sink, LinkEvent.TransmitReady(Port));
                        sink.Wake();
                    }
                    if (ready > 0 && (fds[1].REvents & LibC.POLLIN) != 0)
                    {
                        ulong drained;
                        LibC.Read(_eventFd, &drained, sizeof(ulong));
                    }
                    continue;
                }
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
                if ((events & (LibC.POLLIN | LibC.POLLERR)) != 0)
                {
                    // libpcap reads a pending socket error (e.g. ENETDOWN) itself and reports it as a failed read.
                    int taken = ReceiveBurst(sink, capture);
                    if (taken == 0 && (events & LibC.POLLIN) == 0 && ++idleErrors > 100)
                    {
                        Thread.Sleep(1);
                    }
                    else if (taken > 0)
                    {
                        idleErrors = 0;
                    }
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
            Interlocked.Exchange(ref _ioAllocatedBytes, GC.GetAllocatedBytesForCurrentThread());
        }
    }

    /// <summary>Takes what the capture ring holds, up to a bound; returns the frames posted.</summary>
    private int ReceiveBurst(ILinkEventSink sink, PcapCapture capture)
    {
        var device = capture.Device;
        ulong self = (ulong)Volatile.Read(ref _mac);
        int budget = _options.ReceiveBatch * MaxReceiveRounds;
        int wakeEvery = _options.ReceiveBatch;
        long frames = 0;
        long bytes = 0;
        long own = 0;
        int unannounced = 0;
        nint header = 0;
        nint data = 0;
        for (int i = 0; i < budget && !_stopping; i++)
        {
            int result = device.GetNextPacketPointers(ref header, ref data);
            if (result != 1)
            {
                if (result < 0)
                {
                    ReportReceiveError(sink, device.LastError);
                }
                break;
            }
            var packet = (PacketHeader*)header;
            int captured = (int)Math.Min(packet->CaptureLength, (uint)FrameLayout.BufferSize);
            var bytesIn = new ReadOnlySpan<byte>((void*)data, captured);
            if (captured >= 12 && MacAddress.Read(bytesIn[6..]).Value == self)
            {
                own++; // our own transmission, seen despite the direction filter
                continue;
            }
            var frame = _pool.Rent();
            bytesIn.CopyTo(frame.Buffer);
            frame.Length = (int)Math.Min(packet->Length, (uint)FrameLayout.BufferSize);
            frames++;
            bytes += packet->Length;
            if (!Post(sink, LinkEvent.Received(Port, frame)))
            {
                frame.Release();
            }
            if (++unannounced == wakeEvery)
            {
                unannounced = 0;
                sink.Wake();
            }
        }
        if (own > 0)
        {
            Volatile.Write(ref Counters.OwnFramesIgnoredField, Counters.OwnFramesIgnoredField + own);
        }
        if (frames > 0)
        {
            Volatile.Write(ref Counters.FramesReceivedField, Counters.FramesReceivedField + frames);
            Volatile.Write(ref Counters.BytesReceivedField, Counters.BytesReceivedField + bytes);
            Volatile.Write(ref Counters.ReceiveBatchesField, Counters.ReceiveBatchesField + 1);
            _lastReceiveError = null;
            if (unannounced > 0)
            {
                sink.Wake();
            }
        }
        return (int)frames;
    }

    private void ReportReceiveError(ILinkEventSink sink, string error)
    {
        if (error != _lastReceiveError)
        {
            _lastReceiveError = error;
            sink.Log(LogLevel.Warning, $"link {Port.Name()} {InterfaceName}: libpcap read failed: {error}");
        }
    }

    /// <summary>Posts to the loop, waiting while its inbox is full (the capture ring absorbs the burst meanwhile).</summary>
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
        bool up = false;
        int index = _query.Index(out _);
        if (index <= 0)
        {
            if (_capture is not null)
            {
                // The interface is gone and its handle with it; a new one is opened when it comes back.
                ReplaceCapture(null);
            }
        }
        else
        {
            if (index != _ifIndex || _capture is null)
            {
                Reopen(sink, index);
            }
            _mtu = _query.Mtu();
            // An interface that came back (or was changed) with too small an MTU is unusable: report it as down.
            up = _capture is not null && _query.IsUpAndRunning() && _mtu + FrameLayout.EthernetHeaderSize >= _maxFrameSize;
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

    /// <summary>The interface was created again (new index, maybe a new MAC address): follow it with a new handle.</summary>
    private void Reopen(ILinkEventSink sink, int index)
    {
        try
        {
            var capture = PcapCapture.Open(InterfaceName, _options);
            ReplaceCapture(capture);
            _ifIndex = index;
            if (_query.Mac() is { } mac)
            {
                Volatile.Write(ref _mac, (long)mac.Value);
            }
            IgnoresOutgoingInKernel = capture.IgnoresOutgoingInKernel;
            _lastReopenError = null;
            sink.Log(LogLevel.Info, $"link {Port.Name()} {InterfaceName}: capturing on the interface again (index {index}, {LocalMac})");
        }
        catch (RawEthernetException e)
        {
            if (e.Message != _lastReopenError)
            {
                _lastReopenError = e.Message;
                sink.Log(LogLevel.Warning, $"link {Port.Name()} {InterfaceName}: cannot reopen: {e.Message}");
            }
        }
    }

    private void ReplaceCapture(PcapCapture? replacement)
    {
        PcapCapture? old;
        lock (_captureLock)
        {
            old = _capture;
            _capture = replacement;
        }
        if (old is not null)
        {
            Interlocked.Add(ref Counters.KernelDropsField, old.TakeNewDrops());
            old.Dispose();
        }
    }

    private void ReadKernelStatistics()
    {
        var capture = _capture;
        if (capture is not null)
        {
            long drops = capture.TakeNewDrops();
            if (drops > 0)
            {
                Interlocked.Add(ref Counters.KernelDropsField, drops);
            }
        }
    }

    /// <summary>Moves the I/O thread into the namespace the link was opened in, where its interface lives.</summary>
    private void EnterLinkNamespace()
    {
        if (_namespaceId is not null && CurrentNamespaceId() == _namespaceId)
        {
            return;
        }
        if (LibC.SetNs((int)_namespace.DangerousGetHandle(), LibC.CLONE_NEWNET) != 0)
        {
            throw new RawEthernetException($"cannot enter the network namespace of {InterfaceName}: {LibC.Describe(LibC.Errno)}");
        }
    }

    private static string? CurrentNamespaceId()
    {
        try
        {
            return new FileInfo(NamespacePath).LinkTarget;
        }
        catch (IOException)
        {
            return null;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte* BufferAddress(Frame frame) =>
        (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(frame.Buffer)); // pinned-heap buffer

    private void Signal()
    {
        ulong one = 1;
        LibC.Write(_eventFd, &one, sizeof(ulong));
    }

    private static void CheckMtu(string interfaceName, int mtu, int maxFrameSize)
    {
        int needed = maxFrameSize - FrameLayout.EthernetHeaderSize;
        if (mtu < needed)
        {
            throw new RawEthernetException(
                $"interface {interfaceName} has MTU {mtu}, but {maxFrameSize}-byte frames need MTU {needed} or more " +
                $"(ip link set dev {interfaceName} mtu {needed}, or configure a smaller maximum frame size)");
        }
    }

    // ---------------------------------------------------------------- lifetime

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

    /// <summary>Stops the I/O thread, drops what is left in the transmit ring and closes the capture handle.</summary>
    public void Dispose()
    {
        if (_disposed != 0)
        {
            return;
        }
        Stop();
        lock (_captureLock)
        {
            _disposed = 1;
        }
        while (_txCount > 0)
        {
            TakeHead().Release();
        }
        _capture?.Dispose();
        _capture = null;
        _query.Dispose();
        _namespace.Dispose();
        LibC.Close(_eventFd);
    }

    public override string ToString() => $"{InterfaceName} (pcap, {LocalMac}, MTU {Mtu}) -> {PeerMac}";

    /// <summary><c>struct pcap_pkthdr</c> on 64-bit Linux: a 16-byte timeval, then the captured and the original length.</summary>
    [StructLayout(LayoutKind.Sequential)]
    private struct PacketHeader
    {
        public long Seconds;
        public long Microseconds;
        public uint CaptureLength;
        public uint Length;
    }
}

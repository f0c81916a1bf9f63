using System.Runtime.InteropServices;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Logging;
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
/// What every driver does alike lives in <see cref="TransmitRing"/>, <see cref="LinkIoThread"/> and
/// <see cref="LinkSignal"/>; this class keeps what is particular to libpcap.
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
    private readonly LinkSignal _signal;
    private readonly LinkIoThread _io;
    private readonly Lock _captureLock = new();

    // Replaced only by the I/O thread (under _captureLock); null while the interface is gone.
    private PcapCapture? _capture;
    private int _ifIndex;
    private long _mac;
    private volatile int _mtu;

    // Transmit side: event loop only.
    private readonly TransmitRing _ring;

    // Receive side: I/O thread only.
    private string? _lastReceiveError;
    private string? _lastReopenError;

    private int _disposed;

    private PcapTransport(string interfaceName, FramePool pool, RawEthernetOptions options, InterfaceQuery query, PcapCapture capture,
                          int index, MacAddress mac, int mtu, SafeFileHandle ns, string? namespaceId, LinkSignal signal)
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
        _signal = signal;
        IgnoresOutgoingInKernel = capture.IgnoresOutgoingInKernel;
        _ring = new TransmitRing(options.TransmitRingSize, options.MaxFrameSize, Counters);
        CarrierUp = query.IsUpAndRunning();
        _io = new LinkIoThread(interfaceName, Counters, signal, options.CarrierPollInterval, CarrierUp);
    }

    public LinkDriver Driver => LinkDriver.Pcap;

    public string InterfaceName { get; }

    public Port Port => _io.Port;

    public RawLinkCounters Counters { get; } = new();

    public MacAddress LocalMac => new((ulong)Volatile.Read(ref _mac));

    public MacAddress PeerMac => _ring.PeerMac;

    public int Mtu => _mtu;

    public int MaxFrameSize => _maxFrameSize;

    /// <summary>Whether the kernel drops this host's own outgoing frames before they reach the capture socket.</summary>
    public bool IgnoresOutgoingInKernel { get; private set; }

    public int IoThreadId => _io.ThreadId;

    public long IoThreadAllocatedBytes => _io.AllocatedBytes;

    public bool CanSend => _ring.HasRoom;

    public bool CarrierUp { get; private set; }

    public int PendingTransmit => _ring.Count;

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
        LinkSignal? signal = null;
        try
        {
            int index = query.RequireIndex();
            int mtu = query.Mtu();
            var mac = query.Mac() ?? throw new RawEthernetException($"cannot read the MAC address of {interfaceName}");
            LinkMtu.Require(interfaceName, mtu, options.MaxFrameSize);
            capture = PcapCapture.Open(interfaceName, options);
            ns = File.OpenHandle(NamespacePath);
            signal = LinkSignal.Create(interfaceName);
            return new PcapTransport(interfaceName, pool, options, query, capture, index, mac, mtu, ns, CurrentNamespaceId(), signal);
        }
        catch
        {
            signal?.Dispose();
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
        _io.Start(port, sink, "pcap", IoThreadMain);
    }

    // ---------------------------------------------------------------- transmit (event loop)

    public bool TrySend(Frame frame) => _ring.TryAdd(frame, LocalMac);

    public bool Flush()
    {
        if (_signal.AwaitingWritable || _disposed != 0)
        {
            return false;
        }
        if (_ring.Count == 0)
        {
            return _ring.TakeReadyNotice();
        }
        long frames = 0;
        long bytes = 0;
        lock (_captureLock)
        {
            nint pcap = _capture?.Pcap ?? 0;
            while (_ring.Count > 0)
            {
                var f = _ring.Peek(0);
                int errno;
                if (pcap == 0)
                {
                    errno = LibC.ENODEV; // the interface is gone; the carrier check reports the link down
                }
                else if (LibPcap.Inject(pcap, PinnedFrame.Address(f), f.Length, out errno) >= 0)
                {
                    _ring.TakeHead();
                    frames++;
                    bytes += f.Length;
                    f.Release();
                    continue;
                }
                if (!_ring.OnRefused(errno, _signal, _io))
                {
                    break; // the send buffer is full: stop until the I/O thread sees POLLOUT
                }
            }
        }
        if (frames > 0)
        {
            _ring.RecordSent(frames, bytes);
        }
        return _ring.TakeReadyNotice();
    }

    public void OnWritable() => _signal.OnWritable();

    public void ApplyCarrier(bool up)
    {
        CarrierUp = up;
        if (!up)
        {
            _ring.ForgetPeer();
        }
    }

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
        EnterLinkNamespace();
        int idleErrors = 0;
        while (!_io.Stopping)
        {
            if (_io.IsCheckDue(out int timeoutMs))
            {
                CheckLink();
            }
            var capture = _capture;
            short events = _io.Wait(capture?.Fd ?? -1, timeoutMs);
            if (capture is null)
            {
                // No handle to wait for (the interface is gone): let the loop flush, and so drop, what it holds.
                _io.ReportWritable();
                continue;
            }
            if ((events & (LibC.POLLIN | LibC.POLLERR)) != 0)
            {
                // libpcap reads a pending socket error (e.g. ENETDOWN) itself and reports it as a failed read.
                int taken = ReceiveBurst(capture);
                if (taken == 0 && (events & LibC.POLLIN) == 0 && ++idleErrors > 100)
                {
                    Thread.Sleep(1);
                }
                else if (taken > 0)
                {
                    idleErrors = 0;
                }
            }
            if ((events & LibC.POLLOUT) != 0)
            {
                _io.ReportWritable();
            }
        }
    }

    /// <summary>Takes what the capture ring holds, up to a bound; returns the frames posted.</summary>
    private int ReceiveBurst(PcapCapture capture)
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
        for (int i = 0; i < budget && !_io.Stopping; i++)
        {
            int result = device.GetNextPacketPointers(ref header, ref data);
            if (result != 1)
            {
                if (result < 0)
                {
                    ReportReceiveError(device.LastError);
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
            if (!_io.Post(LinkEvent.Received(Port, frame)))
            {
                frame.Release();
            }
            if (++unannounced == wakeEvery)
            {
                unannounced = 0;
                _io.Wake();
            }
        }
        if (own > 0)
        {
            Volatile.Write(ref Counters.OwnFramesIgnoredField, Counters.OwnFramesIgnoredField + own);
        }
        if (frames > 0)
        {
            Counters.AddReceived(frames, bytes);
            _lastReceiveError = null;
            if (unannounced > 0)
            {
                _io.Wake();
            }
        }
        return (int)frames;
    }

    private void ReportReceiveError(string error)
    {
        if (error != _lastReceiveError)
        {
            _lastReceiveError = error;
            _io.Log(LogLevel.Warning, $"libpcap read failed: {error}");
        }
    }

    private void CheckLink()
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
                Reopen(index);
            }
            _mtu = _query.Mtu();
            // An interface that came back (or was changed) with too small an MTU is unusable: report it as down.
            up = _capture is not null && _query.IsUpAndRunning() && LinkMtu.Fits(_mtu, _maxFrameSize);
        }
        _io.ReportCarrier(up);
        ReadKernelStatistics();
        _io.SampleAllocatedBytes();
    }

    /// <summary>The interface was created again (new index, maybe a new MAC address): follow it with a new handle.</summary>
    private void Reopen(int index)
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
            _io.Log(LogLevel.Info, $"capturing on the interface again (index {index}, {LocalMac})");
        }
        catch (RawEthernetException e)
        {
            if (e.Message != _lastReopenError)
            {
                _lastReopenError = e.Message;
                _io.Log(LogLevel.Warning, $"cannot reopen: {e.Message}");
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

    // ---------------------------------------------------------------- lifetime

    public void Stop()
    {
        _io.Stop();
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
        _ring.ReleaseAll();
        _capture?.Dispose();
        _capture = null;
        _query.Dispose();
        _namespace.Dispose();
        _signal.Dispose();
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

using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// A Linux AF_PACKET raw socket bound to one interface and one EtherType, so the kernel hands us only CamCube frames
/// from that interface. The socket belongs to the network namespace of the thread that opened it and keeps working
/// from any thread afterwards. Interface queries (index, MTU, MAC, flags) go through ioctls on this socket, so they
/// too are answered in the socket's namespace.
/// </summary>
public sealed unsafe class PacketSocket : IDisposable
{
    private readonly ushort _etherType;
    private int _fd;
    private volatile int _ifIndex;
    private volatile int _mtu;
    private long _mac;

    private PacketSocket(int fd, string interfaceName, ushort etherType)
    {
        _fd = fd;
        InterfaceName = interfaceName;
        _etherType = etherType;
    }

    public string InterfaceName { get; }

    /// <summary>The interface's index when last looked up; 0 while the interface is missing.</summary>
    public int InterfaceIndex => _ifIndex;

    public int Mtu => _mtu;

    public MacAddress MacAddress => new((ulong)Volatile.Read(ref _mac));

    /// <summary>Whether the kernel drops this host's own outgoing frames before they reach the socket (Linux 4.20+).</summary>
    public bool IgnoresOutgoingInKernel { get; private set; }

    /// <summary>The receive buffer the kernel granted, in bytes (it reports double the requested bookkeeping size).</summary>
    public int ReceiveBufferBytes { get; private set; }

    public int SendBufferBytes { get; private set; }

    internal int Fd => _fd;

    /// <summary>
    /// Opens <paramref name="interfaceName"/> in the calling thread's network namespace for frames of
    /// <paramref name="etherType"/>. Throws <see cref="RawEthernetException"/> with one clear line on failure.
    /// </summary>
    public static PacketSocket Open(
        string interfaceName,
        ushort etherType = FrameLayout.EtherType,
        int receiveBufferBytes = 16 << 20,
        int sendBufferBytes = 1 << 20,
        bool ignoreOutgoing = true)
    {
        ValidateName(interfaceName);
        if (!OperatingSystem.IsLinux())
        {
            throw new RawEthernetException("raw Ethernet links need Linux (AF_PACKET sockets)");
        }
        // Protocol 0: the socket receives nothing until bind() attaches it to one interface and EtherType, so no
        // frame from another interface can slip in between socket() and bind().
        int fd = LibC.Socket(LibC.AF_PACKET, LibC.SOCK_RAW | LibC.SOCK_CLOEXEC, 0);
        if (fd < 0)
        {
            int errno = LibC.Errno;
            throw errno is LibC.EPERM or LibC.EACCES
                ? new RawEthernetException($"opening a raw Ethernet socket on {interfaceName} needs root or CAP_NET_RAW ({LibC.Describe(errno)})") { Errno = errno }
                : new RawEthernetException($"cannot open a raw Ethernet socket on {interfaceName}: {LibC.Describe(errno)}") { Errno = errno };
        }
        var socket = new PacketSocket(fd, interfaceName, etherType);
        try
        {
            socket.BindTo(InterfaceQuery.RequireIndex(fd, interfaceName));
            socket.ReceiveBufferBytes = socket.SetBuffer(LibC.SO_RCVBUFFORCE, LibC.SO_RCVBUF, receiveBufferBytes);
            socket.SendBufferBytes = socket.SetBuffer(LibC.SO_SNDBUFFORCE, LibC.SO_SNDBUF, sendBufferBytes);
            if (ignoreOutgoing)
            {
                socket.IgnoresOutgoingInKernel = IgnoreOutgoing(fd);
            }
            if (!socket.RefreshAddresses(out int errno))
            {
                throw new RawEthernetException($"cannot read the MTU and MAC address of {interfaceName}: {LibC.Describe(errno)}") { Errno = errno };
            }
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Whether the interface is administratively up and running (carrier present). Re-binds the socket when the
    /// interface has disappeared and come back under the same name with a new index. Called by one thread at a time.
    /// </summary>
    public bool QueryCarrier()
    {
        int index = InterfaceQuery.Index(_fd, InterfaceName, out _);
        if (index <= 0)
        {
            _ifIndex = 0;
            return false;
        }
        if (index != _ifIndex)
        {
            // The interface was re-created: follow it, and pick up its new MAC address and MTU.
            if (!TryBind(index, out _) || !RefreshAddresses(out _))
            {
                return false;
            }
        }
        return InterfaceQuery.IsUpAndRunning(_fd, InterfaceName);
    }

    /// <summary>Frames received and dropped by the kernel since the previous call (the kernel resets them on read).</summary>
    public (long Packets, long Drops) ReadStatistics()
    {
        LibC.TPacketStats stats = default;
        uint length = (uint)sizeof(LibC.TPacketStats);
        if (LibC.GetSockOpt(_fd, LibC.SOL_PACKET, LibC.PACKET_STATISTICS, &stats, &length) != 0)
        {
            return (0, 0);
        }
        return (stats.Packets, stats.Drops);
    }

    /// <summary>Reads and clears a pending asynchronous socket error (for example ENETDOWN after the interface vanished).</summary>
    public int TakeError()
    {
        int error = 0;
        uint length = sizeof(int);
        return LibC.GetSockOpt(_fd, LibC.SOL_SOCKET, LibC.SO_ERROR, &error, &length) == 0 ? error : LibC.Errno;
    }

    /// <summary>Sends one frame exactly as given (MAC addresses included). Blocks while the send buffer is full.</summary>
    public void Send(ReadOnlySpan<byte> frame)
    {
        fixed (byte* p = frame)
        {
            while (true)
            {
                if (LibC.Send(_fd, p, (nuint)frame.Length, 0) >= 0)
                {
                    return;
                }
                int errno = LibC.Errno;
                if (errno != LibC.EINTR)
                {
                    throw new RawEthernetException($"sending a {frame.Length}-byte frame on {InterfaceName} failed: {LibC.Describe(errno)}") { Errno = errno };
                }
            }
        }
    }

    /// <summary>
    /// Waits up to <paramref name="timeoutMs"/> for a frame that this host did not send itself and copies it into
    /// <paramref name="buffer"/>; returns its full length (which may exceed the buffer), or -1 on timeout.
    /// </summary>
    public int Receive(Span<byte> buffer, int timeoutMs)
    {
        long deadline = Environment.TickCount64 + timeoutMs;
        fixed (byte* p = buffer)
        {
            while (true)
            {
                int remaining = (int)Math.Max(0, deadline - Environment.TickCount64);
                LibC.PollFd pfd = new() { Fd = _fd, Events = LibC.POLLIN };
                int ready = LibC.Poll(&pfd, 1, remaining);
                if (ready == 0)
                {
                    return -1;
                }
                if (ready < 0 && LibC.Errno != LibC.EINTR)
                {
                    throw new RawEthernetException($"waiting for a frame on {InterfaceName} failed: {LibC.Describe(LibC.Errno)}");
                }
                LibC.SockAddrLl from = default;
                uint fromLength = (uint)sizeof(LibC.SockAddrLl);
                nint n = LibC.RecvFrom(_fd, p, (nuint)buffer.Length, LibC.MSG_DONTWAIT | LibC.MSG_TRUNC, &from, &fromLength);
                if (n >= 0 && from.PktType != LibC.PACKET_OUTGOING)
                {
                    return (int)n;
                }
            }
        }
    }

    public void Dispose()
    {
        int fd = Interlocked.Exchange(ref _fd, -1);
        if (fd >= 0)
        {
            LibC.Close(fd);
        }
    }

    /// <summary>Throws <see cref="RawEthernetException"/> unless <paramref name="name"/> can name a Linux interface.</summary>
    internal static void ValidateName(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (name.Length == 0 || name.Length >= LibC.IFNAMSIZ)
        {
            throw new RawEthernetException($"'{name}' is not a valid interface name (1 to {LibC.IFNAMSIZ - 1} characters)");
        }
        foreach (char c in name)
        {
            if (c <= ' ' || c > '~' || c == '/' || c == ':')
            {
                throw new RawEthernetException($"'{name}' is not a valid interface name");
            }
        }
    }

    private void BindTo(int index)
    {
        if (!TryBind(index, out int errno))
        {
            throw new RawEthernetException($"cannot bind a raw Ethernet socket to {InterfaceName}: {LibC.Describe(errno)}") { Errno = errno };
        }
    }

    private bool TryBind(int index, out int errno)
    {
        LibC.SockAddrLl addr = default;
        addr.Family = LibC.AF_PACKET;
        addr.Protocol = LibC.HostToNetwork(_etherType);
        addr.IfIndex = index;
        if (LibC.Bind(_fd, &addr, (uint)sizeof(LibC.SockAddrLl)) != 0)
        {
            errno = LibC.Errno;
            return false;
        }
        errno = 0;
        _ifIndex = index;
        return true;
    }

    private bool RefreshAddresses(out int errno)
    {
        int mtu = InterfaceQuery.Mtu(_fd, InterfaceName, out errno);
        if (errno != 0)
        {
            return false;
        }
        _mtu = mtu;
        if (InterfaceQuery.Mac(_fd, InterfaceName, out errno) is not { } mac)
        {
            return false;
        }
        Volatile.Write(ref _mac, (long)mac.Value);
        return true;
    }

    /// <summary>
    /// Asks the kernel not to hand this host's own transmissions to packet socket <paramref name="fd"/> (Linux 4.20+,
    /// PACKET_IGNORE_OUTGOING); true when it agreed.
    /// </summary>
    internal static bool IgnoreOutgoing(int fd)
    {
        int one = 1;
        return LibC.SetSockOpt(fd, LibC.SOL_PACKET, LibC.PACKET_IGNORE_OUTGOING, &one, sizeof(int)) == 0;
    }

    /// <summary>
    /// Asks for a <paramref name="bytes"/> socket buffer on <paramref name="fd"/>: <paramref name="forceOption"/> first
    /// (SO_RCVBUFFORCE/SO_SNDBUFFORCE, root / CAP_NET_ADMIN: ignores net.core.[rw]mem_max), else the capped
    /// <paramref name="option"/>.
    /// </summary>
    internal static void RequestBuffer(int fd, int forceOption, int option, int bytes)
    {
        if (LibC.SetSockOpt(fd, LibC.SOL_SOCKET, forceOption, &bytes, sizeof(int)) != 0)
        {
            LibC.SetSockOpt(fd, LibC.SOL_SOCKET, option, &bytes, sizeof(int));
        }
    }

    private int SetBuffer(int forceOption, int option, int bytes)
    {
        RequestBuffer(_fd, forceOption, option, bytes);
        int granted = 0;
        uint length = sizeof(int);
        LibC.GetSockOpt(_fd, LibC.SOL_SOCKET, option, &granted, &length);
        return granted;
    }
}

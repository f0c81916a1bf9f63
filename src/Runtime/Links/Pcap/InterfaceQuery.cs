using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Runtime.Links.Pcap;

/// <summary>
/// Looks up a network interface by name (index, flags, MTU, MAC address) through ioctls on a datagram socket. The
/// socket belongs to the network namespace of the thread that opened it, so the answers do too, from any thread.
/// Needs no privilege.
/// </summary>
internal sealed unsafe class InterfaceQuery : IDisposable
{
    private int _fd;

    private InterfaceQuery(int fd, string interfaceName)
    {
        _fd = fd;
        InterfaceName = interfaceName;
    }

    public string InterfaceName { get; }

    public static InterfaceQuery Open(string interfaceName)
    {
        PacketSocket.ValidateName(interfaceName);
        int fd = LibC.Socket(LibC.AF_INET, LibC.SOCK_DGRAM | LibC.SOCK_CLOEXEC, 0);
        if (fd < 0)
        {
            int errno = LibC.Errno;
            throw new RawEthernetException($"cannot open a socket to look up {interfaceName}: {LibC.Describe(errno)}") { Errno = errno };
        }
        return new InterfaceQuery(fd, interfaceName);
    }

    /// <summary>The interface's index, or 0 with <paramref name="errno"/> (ENODEV: no such interface).</summary>
    public int Index(out int errno) => Query(LibC.SIOCGIFINDEX, out var req, out errno) ? req.IntValue : 0;

    /// <summary>The MTU, or 0 when the interface cannot be read.</summary>
    public int Mtu() => Query(LibC.SIOCGIFMTU, out var req, out _) ? req.IntValue : 0;

    /// <summary>The hardware address, or null when the interface cannot be read.</summary>
    public MacAddress? Mac()
    {
        if (!Query(LibC.SIOCGIFHWADDR, out var req, out _))
        {
            return null;
        }
        return MacAddress.Read(new ReadOnlySpan<byte>(req.HwAddr, 6));
    }

    /// <summary>Whether the interface is administratively up and running (carrier present).</summary>
    public bool IsUpAndRunning()
    {
        const short upAndRunning = LibC.IFF_UP | LibC.IFF_RUNNING;
        return Query(LibC.SIOCGIFFLAGS, out var req, out _) && (req.Flags & upAndRunning) == upAndRunning;
    }

    public void Dispose()
    {
        int fd = Interlocked.Exchange(ref _fd, -1);
        if (fd >= 0)
        {
            LibC.Close(fd);
        }
    }

    private bool Query(ulong request, out LibC.IfReq req, out int errno)
    {
        req = default;
        LibC.SetName(ref req, InterfaceName);
        fixed (LibC.IfReq* p = &req)
        {
            if (LibC.Ioctl(_fd, request, p) != 0)
            {
                errno = LibC.Errno;
                return false;
            }
        }
        errno = 0;
        return true;
    }
}

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// Looks up a network interface by name (index, flags, MTU, MAC address) through ioctls on a socket, which answers
/// for its own network namespace, from any thread. An instance owns a datagram socket of its own (needs no
/// privilege); the static forms ask through a socket the caller already has (<see cref="PacketSocket"/> uses its own).
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
    public int Index(out int errno) => Index(_fd, InterfaceName, out errno);

    /// <summary>The interface's index; fails with one line saying whether it is missing or could not be looked up.</summary>
    public int RequireIndex() => RequireIndex(_fd, InterfaceName);

    /// <summary>The MTU, or 0 when the interface cannot be read.</summary>
    public int Mtu() => Mtu(_fd, InterfaceName, out _);

    /// <summary>The hardware address, or null when the interface cannot be read.</summary>
    public MacAddress? Mac() => Mac(_fd, InterfaceName, out _);

    /// <summary>Whether the interface is administratively up and running (carrier present).</summary>
    public bool IsUpAndRunning() => IsUpAndRunning(_fd, InterfaceName);

    public void Dispose()
    {
        int fd = Interlocked.Exchange(ref _fd, -1);
        if (fd >= 0)
        {
            LibC.Close(fd);
        }
    }

    /// <summary>The index of <paramref name="name"/>, or 0 with <paramref name="errno"/> (ENODEV: no such interface).</summary>
    public static int Index(int fd, string name, out int errno) => Query(fd, name, LibC.SIOCGIFINDEX, out var req, out errno) ? req.IntValue : 0;

    /// <summary>The index of <paramref name="name"/>; fails with one line saying whether it is missing or could not be looked up.</summary>
    public static int RequireIndex(int fd, string name)
    {
        int index = Index(fd, name, out int errno);
        if (index <= 0)
        {
            throw errno == LibC.ENODEV
                ? new RawEthernetException($"network interface {name} does not exist (in this network namespace)") { Errno = errno }
                : new RawEthernetException($"cannot look up network interface {name}: {LibC.Describe(errno)}") { Errno = errno };
        }
        return index;
    }

    /// <summary>The MTU of <paramref name="name"/>, or 0 with <paramref name="errno"/> when it cannot be read.</summary>
    public static int Mtu(int fd, string name, out int errno) => Query(fd, name, LibC.SIOCGIFMTU, out var req, out errno) ? req.IntValue : 0;

    /// <summary>The hardware address of <paramref name="name"/>, or null with <paramref name="errno"/> when it cannot be read.</summary>
    public static MacAddress? Mac(int fd, string name, out int errno) =>
        Query(fd, name, LibC.SIOCGIFHWADDR, out var req, out errno) ? MacAddress.Read(new ReadOnlySpan<byte>(req.HwAddr, 6)) : null;

    /// <summary>Whether <paramref name="name"/> is administratively up and running (carrier present).</summary>
    public static bool IsUpAndRunning(int fd, string name)
    {
        const short upAndRunning = LibC.IFF_UP | LibC.IFF_RUNNING;
        return Query(fd, name, LibC.SIOCGIFFLAGS, out var req, out _) && (req.Flags & upAndRunning) == upAndRunning;
    }

    private static bool Query(int fd, string name, ulong request, out LibC.IfReq req, out int errno)
    {
        req = default;
        LibC.SetName(ref req, name);
        fixed (LibC.IfReq* p = &req)
        {
            if (LibC.Ioctl(fd, request, p) != 0)
            {
                errno = LibC.Errno;
                return false;
            }
        }
        errno = 0;
        return true;
    }
}

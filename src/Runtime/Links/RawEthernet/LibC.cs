using System.Runtime.InteropServices;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// The few Linux system calls the raw-Ethernet link needs (AF_PACKET sockets, poll, eventfd, setns). Layouts are the
/// 64-bit Linux ABI (x86-64 and arm64 agree on every struct and constant used here).
/// </summary>
internal static unsafe partial class LibC
{
    private const string Lib = "libc";

    public const int AF_INET = 2;
    public const int AF_PACKET = 17;
    public const int SOCK_DGRAM = 2;
    public const int SOCK_RAW = 3;
    public const int SOCK_CLOEXEC = 0x80000;

    public const int SOL_SOCKET = 1;
    public const int SO_ERROR = 4;
    public const int SO_SNDBUF = 7;
    public const int SO_RCVBUF = 8;
    public const int SO_SNDBUFFORCE = 32;
    public const int SO_RCVBUFFORCE = 33;

    public const int SOL_PACKET = 263;
    public const int PACKET_STATISTICS = 6;
    public const int PACKET_IGNORE_OUTGOING = 23;

    /// <summary><c>sll_pkttype</c> of a frame this host sent (seen by packet sockets unless ignored).</summary>
    public const byte PACKET_OUTGOING = 4;

    public const ulong SIOCGIFFLAGS = 0x8913;
    public const ulong SIOCGIFMTU = 0x8921;
    public const ulong SIOCGIFHWADDR = 0x8927;
    public const ulong SIOCGIFINDEX = 0x8933;

    public const short IFF_UP = 0x1;
    public const short IFF_RUNNING = 0x40;

    public const short POLLIN = 0x1;
    public const short POLLOUT = 0x4;
    public const short POLLERR = 0x8;
    public const short POLLHUP = 0x10;
    public const short POLLNVAL = 0x20;

    public const int MSG_TRUNC = 0x20;
    public const int MSG_DONTWAIT = 0x40;

    public const int F_GETFL = 3;
    public const int F_SETFL = 4;
    public const int O_NONBLOCK = 0x800;

    public const int EFD_NONBLOCK = 0x800;
    public const int EFD_CLOEXEC = 0x80000;

    public const int CLONE_NEWNET = 0x40000000;

    public const int EPERM = 1;
    public const int EINTR = 4;
    public const int ENXIO = 6;
    public const int EAGAIN = 11;
    public const int EACCES = 13;
    public const int ENODEV = 19;
    public const int EMSGSIZE = 90;
    public const int ENETDOWN = 100;
    public const int ENOBUFS = 105;

    public const int IFNAMSIZ = 16;

    [StructLayout(LayoutKind.Sequential)]
    public struct SockAddrLl
    {
        public ushort Family;
        public ushort Protocol; // network byte order
        public int IfIndex;
        public ushort HaType;
        public byte PktType;
        public byte HaLen;
        public fixed byte Addr[8];
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct IoVec
    {
        public void* Base;
        public nuint Length;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct MsgHdr
    {
        public void* Name;
        public uint NameLen;
        public IoVec* Iov;
        public nuint IovLen;
        public void* Control;
        public nuint ControlLen;
        public int Flags;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct MMsgHdr
    {
        public MsgHdr Hdr;
        public uint Len;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct PollFd
    {
        public int Fd;
        public short Events;
        public short REvents;
    }

    /// <summary><c>struct ifreq</c>: a 16-byte name then a 24-byte union (flags, mtu, index or a hardware address).</summary>
    [StructLayout(LayoutKind.Explicit, Size = 40)]
    public struct IfReq
    {
        [FieldOffset(0)]
        public fixed byte Name[IFNAMSIZ];

        [FieldOffset(16)]
        public short Flags;

        [FieldOffset(16)]
        public int IntValue;

        /// <summary>sockaddr: 2-byte family, then the address bytes.</summary>
        [FieldOffset(18)]
        public fixed byte HwAddr[14];
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct TPacketStats
    {
        public uint Packets;
        public uint Drops;
    }

    [LibraryImport(Lib, EntryPoint = "socket", SetLastError = true)]
    public static partial int Socket(int domain, int type, int protocol);

    [LibraryImport(Lib, EntryPoint = "bind", SetLastError = true)]
    public static partial int Bind(int fd, SockAddrLl* addr, uint addrLen);

    [LibraryImport(Lib, EntryPoint = "setsockopt", SetLastError = true)]
    public static partial int SetSockOpt(int fd, int level, int name, void* value, uint length);

    [LibraryImport(Lib, EntryPoint = "getsockopt", SetLastError = true)]
    public static partial int GetSockOpt(int fd, int level, int name, void* value, uint* length);

    [LibraryImport(Lib, EntryPoint = "ioctl", SetLastError = true)]
    public static partial int Ioctl(int fd, ulong request, void* arg);

    [LibraryImport(Lib, EntryPoint = "poll", SetLastError = true)]
    public static partial int Poll(PollFd* fds, ulong count, int timeoutMs);

    [LibraryImport(Lib, EntryPoint = "recvmmsg", SetLastError = true)]
    public static partial int RecvMMsg(int fd, MMsgHdr* msgs, uint count, int flags, void* timeout);

    [LibraryImport(Lib, EntryPoint = "sendmmsg", SetLastError = true)]
    public static partial int SendMMsg(int fd, MMsgHdr* msgs, uint count, int flags);

    [LibraryImport(Lib, EntryPoint = "send", SetLastError = true)]
    public static partial nint Send(int fd, void* buffer, nuint length, int flags);

    [LibraryImport(Lib, EntryPoint = "recvfrom", SetLastError = true)]
    public static partial nint RecvFrom(int fd, void* buffer, nuint length, int flags, SockAddrLl* from, uint* fromLen);

    [LibraryImport(Lib, EntryPoint = "eventfd", SetLastError = true)]
    public static partial int EventFd(uint initial, int flags);

    [LibraryImport(Lib, EntryPoint = "read", SetLastError = true)]
    public static partial nint Read(int fd, void* buffer, nuint count);

    [LibraryImport(Lib, EntryPoint = "write", SetLastError = true)]
    public static partial nint Write(int fd, void* buffer, nuint count);

    [LibraryImport(Lib, EntryPoint = "close", SetLastError = true)]
    public static partial int Close(int fd);

    [LibraryImport(Lib, EntryPoint = "fcntl", SetLastError = true)]
    public static partial int Fcntl(int fd, int command, int argument);

    [LibraryImport(Lib, EntryPoint = "setns", SetLastError = true)]
    public static partial int SetNs(int fd, int nstype);

    [LibraryImport(Lib, EntryPoint = "gettid")]
    public static partial int GetTid();

    public static int Errno => Marshal.GetLastPInvokeError();

    /// <summary>The kernel's text for an errno value.</summary>
    public static string Describe(int errno) => $"{Marshal.GetPInvokeErrorMessage(errno)} (errno {errno})";

    public static ushort HostToNetwork(ushort value) =>
        BitConverter.IsLittleEndian ? (ushort)((value >> 8) | (value << 8)) : value;

    /// <summary>Fills the name of an <c>ifreq</c>; the caller has checked the name fits.</summary>
    public static void SetName(ref IfReq req, string name)
    {
        fixed (byte* p = req.Name)
        {
            var span = new Span<byte>(p, IFNAMSIZ);
            span.Clear();
            for (int i = 0; i < name.Length; i++)
            {
                span[i] = (byte)name[i];
            }
        }
    }
}

using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Cli.Tests.Fuzz;

/// <summary>
/// Puts raw Ethernet frames, exactly as given, onto one interface of a network namespace: an AF_PACKET socket of
/// its own (not the node's), bound for sending only, flushed with one sendmmsg per batch so that a million frames
/// go out in seconds. On a veth end the frames arrive at the peer end, a node's port, as if its neighbour sent them.
/// </summary>
internal sealed unsafe partial class FrameInjector : IDisposable
{
    private const int AfPacket = 17;
    private const int SockRaw = 3;
    private const int SolSocket = 1;
    private const int SoSndBufForce = 32;

    private readonly MMsgHdr[] _messages;
    private readonly IoVec[] _vectors;
    private int _fd;

    private FrameInjector(int fd, int batch)
    {
        _fd = fd;
        _messages = GC.AllocateArray<MMsgHdr>(batch, pinned: true);
        _vectors = GC.AllocateArray<IoVec>(batch, pinned: true);
    }

    /// <summary>Opens <paramref name="interfaceName"/> in namespace <paramref name="netns"/>.</summary>
    public static FrameInjector Open(string netns, string interfaceName, int batch) => NetworkNamespace.Run(netns, () =>
    {
        // Protocol 0: the socket receives nothing, so it never competes with the node's for frames.
        int fd = Socket(AfPacket, SockRaw, 0);
        if (fd < 0)
        {
            throw new InvalidOperationException($"socket(AF_PACKET) in {netns}: errno {Marshal.GetLastPInvokeError()}");
        }
        uint index = IfNameToIndex(interfaceName);
        SockAddrLl address = new() { Family = AfPacket, IfIndex = (int)index };
        int bytes = 8 << 20;
        if (index == 0 || Bind(fd, &address, (uint)sizeof(SockAddrLl)) != 0 || SetSockOpt(fd, SolSocket, SoSndBufForce, &bytes, sizeof(int)) != 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            Close(fd);
            throw new InvalidOperationException($"cannot bind to {interfaceName} in {netns}: errno {errno}");
        }
        return new FrameInjector(fd, batch);
    });

    public int BatchSize => _messages.Length;

    /// <summary>Sends frames[i][..lengths[i]] for i below <paramref name="count"/>; returns how many the kernel took.</summary>
    public int Send(byte[][] frames, int[] lengths, int count)
    {
        for (int i = 0; i < count; i++)
        {
            // The frames are pinned arrays (GC.AllocateArray pinned), so their addresses hold during the call.
            _vectors[i] = new IoVec { Base = (nint)Unsafe.AsPointer(ref frames[i][0]), Length = (nuint)lengths[i] };
            _messages[i] = new MMsgHdr { Header = new MsgHdr { Iov = (nint)Unsafe.AsPointer(ref _vectors[i]), IovLength = 1 } };
        }
        int sent = 0;
        fixed (MMsgHdr* messages = _messages)
        {
            while (sent < count)
            {
                int n = SendMMsg(_fd, messages + sent, (uint)(count - sent), 0);
                if (n < 0)
                {
                    int errno = Marshal.GetLastPInvokeError();
                    if (errno == 4)
                    {
                        continue; // EINTR
                    }
                    throw new InvalidOperationException($"sendmmsg: errno {errno} at frame {sent} ({lengths[sent]} bytes)");
                }
                sent += n;
            }
        }
        return sent;
    }

    public void Dispose()
    {
        int fd = Interlocked.Exchange(ref _fd, -1);
        if (fd >= 0)
        {
            Close(fd);
        }
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct SockAddrLl
    {
        public ushort Family;
        public ushort Protocol;
        public int IfIndex;
        public ushort HaType;
        public byte PktType;
        public byte HaLen;
        public ulong Addr;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct IoVec
    {
        public nint Base;
        public nuint Length;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct MsgHdr
    {
        public nint Name;
        public uint NameLength;
        public nint Iov;
        public nuint IovLength;
        public nint Control;
        public nuint ControlLength;
        public int Flags;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct MMsgHdr
    {
        public MsgHdr Header;
        public uint Length;
    }

    [LibraryImport("libc", EntryPoint = "socket", SetLastError = true)]
    private static partial int Socket(int domain, int type, int protocol);

    [LibraryImport("libc", EntryPoint = "bind", SetLastError = true)]
    private static partial int Bind(int fd, SockAddrLl* address, uint length);

    [LibraryImport("libc", EntryPoint = "setsockopt", SetLastError = true)]
    private static partial int SetSockOpt(int fd, int level, int name, void* value, uint length);

    [LibraryImport("libc", EntryPoint = "if_nametoindex", StringMarshalling = StringMarshalling.Utf8)]
    private static partial uint IfNameToIndex(string name);

    [LibraryImport("libc", EntryPoint = "sendmmsg", SetLastError = true)]
    private static partial int SendMMsg(int fd, MMsgHdr* messages, uint count, int flags);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int Close(int fd);
}

using System.Runtime.InteropServices;

namespace Camdoop.Runtime.Links.Pcap;

/// <summary>
/// The few libpcap calls SharpPcap 6.3 does not offer, or offers wrongly: pcap_setdirection (capture inbound frames
/// only), pcap_inject with its errno (SharpPcap's SendPacket throws on every failure, including a full send buffer,
/// which the transmit path meets routinely), pcap_get_selectable_fd, and pcap_stats (SharpPcap reads Linux's
/// <c>struct pcap_stat</c> as three pointer-sized fields, so on 64-bit Linux its DroppedPackets is really ps_ifdrop and
/// the kernel's drops never show). The library is looked up under the names SharpPcap tries.
/// </summary>
internal static unsafe class LibPcap
{
    public const int DirectionIn = 1; // PCAP_D_IN

    /// <summary>What to install when the library is missing (Debian and Ubuntu name it libpcap0.8).</summary>
    public const string NotFound = "libpcap not found: apt-get install libpcap0.8";

    private static readonly string[] Names = ["libpcap.so.0.8", "libpcap.so.1", "libpcap.so", "libpcap.so.0"];

    private static readonly nint LibraryHandle = Load();
    private static readonly delegate* unmanaged<nint, int, int> PcapSetDirection = (delegate* unmanaged<nint, int, int>)Export("pcap_setdirection");
    private static readonly delegate* unmanaged<nint, byte*, nuint, int> PcapInject = (delegate* unmanaged<nint, byte*, nuint, int>)Export("pcap_inject");
    private static readonly delegate* unmanaged<nint, int> PcapSelectableFd = (delegate* unmanaged<nint, int>)Export("pcap_get_selectable_fd");
    private static readonly delegate* unmanaged<nint, Statistics*, int> PcapStats = (delegate* unmanaged<nint, Statistics*, int>)Export("pcap_stats");

    /// <summary>Null when libpcap can be loaded, else the one line that says how to get it.</summary>
    public static string? WhyUnavailable() =>
        LibraryHandle != 0 && PcapSetDirection is not null && PcapInject is not null && PcapSelectableFd is not null && PcapStats is not null
            ? null
            : NotFound;

    public static int SetDirection(nint pcap, int direction) => PcapSetDirection(pcap, direction);

    public static int SelectableFd(nint pcap) => PcapSelectableFd(pcap);

    /// <summary>
    /// Frames the kernel dropped because the capture ring was full, counted since the handle was opened (libpcap sums
    /// the kernel's PACKET_STATISTICS); -1 when unavailable.
    /// </summary>
    public static long Drops(nint pcap)
    {
        Statistics stats;
        return PcapStats(pcap, &stats) == 0 ? stats.Dropped : -1;
    }

    /// <summary>Sends one frame as given; returns the bytes sent, or -1 with <paramref name="errno"/> set.</summary>
    public static int Inject(nint pcap, byte* frame, int length, out int errno)
    {
        Marshal.SetLastSystemError(0);
        int sent = PcapInject(pcap, frame, (nuint)length);
        errno = sent < 0 ? Marshal.GetLastSystemError() : 0;
        return sent;
    }

    /// <summary><c>struct pcap_stat</c> on Linux: three unsigned ints.</summary>
    private struct Statistics
    {
        public uint Received;
        public uint Dropped;
        public uint InterfaceDropped;
    }

    private static nint Load()
    {
        if (!OperatingSystem.IsLinux())
        {
            return 0;
        }
        foreach (var name in Names)
        {
            if (NativeLibrary.TryLoad(name, out var handle))
            {
                return handle;
            }
        }
        return 0;
    }

    private static nint Export(string name) =>
        LibraryHandle != 0 && NativeLibrary.TryGetExport(LibraryHandle, name, out var address) ? address : 0;
}

using System.Runtime.InteropServices;

namespace Camdoop.Runtime.Links.Pcap;

/// <summary>
/// The few libpcap calls SharpPcap 6.3 does not offer: pcap_setdirection (capture inbound frames only), pcap_inject
/// with its errno (SharpPcap's SendPacket throws on every failure, including a full send buffer, which the transmit
/// path meets routinely) and pcap_get_selectable_fd. The library is looked up under the names SharpPcap tries.
/// </summary>
internal static unsafe class LibPcap
{
    public const int DirectionIn = 1; // PCAP_D_IN

    /// <summary>What to install when the library is missing (Debian and Ubuntu name it libpcap0.8).</summary>
    public const string NotFound = "libpcap not found: apt-get install libpcap0.8";

    private static readonly string[] Names = ["libpcap.so.0.8", "libpcap.so.1", "libpcap.so", "libpcap.so.0"];

    private static readonly nint s_library = Load();
    private static readonly delegate* unmanaged<nint, int, int> s_setDirection = (delegate* unmanaged<nint, int, int>)Export("pcap_setdirection");
    private static readonly delegate* unmanaged<nint, byte*, nuint, int> s_inject = (delegate* unmanaged<nint, byte*, nuint, int>)Export("pcap_inject");
    private static readonly delegate* unmanaged<nint, int> s_selectableFd = (delegate* unmanaged<nint, int>)Export("pcap_get_selectable_fd");

    /// <summary>Null when libpcap can be loaded, else the one line that says how to get it.</summary>
    public static string? WhyUnavailable() =>
        s_library != 0 && s_setDirection is not null && s_inject is not null && s_selectableFd is not null ? null : NotFound;

    public static int SetDirection(nint pcap, int direction) => s_setDirection(pcap, direction);

    public static int SelectableFd(nint pcap) => s_selectableFd(pcap);

    /// <summary>Sends one frame as given; returns the bytes sent, or -1 with <paramref name="errno"/> set.</summary>
    public static int Inject(nint pcap, byte* frame, int length, out int errno)
    {
        Marshal.SetLastSystemError(0);
        int sent = s_inject(pcap, frame, (nuint)length);
        errno = sent < 0 ? Marshal.GetLastSystemError() : 0;
        return sent;
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
        s_library != 0 && NativeLibrary.TryGetExport(s_library, name, out var address) ? address : 0;
}

using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using SharpPcap;
using SharpPcap.LibPcap;

namespace Camdoop.Runtime.Links.Pcap;

/// <summary>
/// One libpcap capture handle on an interface, set up for CamCube links: activated in the calling thread's network
/// namespace, immediate mode, snap length of a whole pooled frame buffer, a capture ring of
/// <see cref="RawEthernetOptions.CaptureBufferBytes"/>, the BPF filter <c>ether proto 0x88b5</c>, inbound frames only
/// (pcap_setdirection, and PACKET_IGNORE_OUTGOING on its socket when asked), non-blocking reads, and a non-blocking
/// socket for injection so that a full send buffer is reported (EAGAIN) instead of stalling the caller.
/// </summary>
internal sealed class PcapCapture : IDisposable
{
    private PcapCapture(LibPcapLiveDevice device, int fd, bool ignoresOutgoingInKernel)
    {
        Device = device;
        Pcap = device.Handle.DangerousGetHandle();
        Fd = fd;
        IgnoresOutgoingInKernel = ignoresOutgoingInKernel;
    }

    public LibPcapLiveDevice Device { get; }

    /// <summary>The pcap_t behind <see cref="Device"/>, valid until <see cref="Dispose"/>.</summary>
    public nint Pcap { get; }

    /// <summary>The handle's socket, for poll(2).</summary>
    public int Fd { get; }

    public bool IgnoresOutgoingInKernel { get; }

    /// <summary>Drops counted so far by libpcap (cumulative for this handle).</summary>
    public long DropsSeen { get; set; }

    /// <summary>Opens the handle; throws <see cref="RawEthernetException"/> with one clear line.</summary>
    public static PcapCapture Open(string interfaceName, RawEthernetOptions options)
    {
        if (LibPcap.WhyUnavailable() is { } why)
        {
            throw new RawEthernetException(why);
        }
        PcapInterface? found;
        try
        {
            // Lists the interfaces of the calling thread's namespace (LibPcapLiveDeviceList.Instance would cache
            // one namespace's list for the whole process).
            found = PcapInterface.GetAllPcapInterfaces().FirstOrDefault(i => i.Name == interfaceName);
        }
        catch (Exception e) when (e is DllNotFoundException or TypeInitializationException { InnerException: DllNotFoundException })
        {
            throw new RawEthernetException(LibPcap.NotFound, e);
        }
        catch (PcapException e)
        {
            throw new RawEthernetException($"libpcap cannot list the network interfaces: {e.Message}", e);
        }
        if (found is null)
        {
            throw new RawEthernetException($"network interface {interfaceName} does not exist (in this network namespace)");
        }

        var device = new LibPcapLiveDevice(found);
        try
        {
            string? refused = null;
            var configuration = new DeviceConfiguration
            {
                Mode = DeviceModes.None, // not promiscuous: frames come to our address or to broadcast
                Snaplen = FrameLayout.BufferSize, // longer than any valid frame, so oversize frames are still seen (and rejected)
                ReadTimeout = 100,
                BufferSize = options.CaptureBufferBytes,
                Immediate = true,
            };
            configuration.ConfigurationFailed += (_, e) => refused ??= $"{e.Property}: {e.Message}";
            try
            {
                device.Open(configuration);
            }
            catch (PcapException e)
            {
                throw e.Error switch
                {
                    PcapError.PermissionDenied or PcapError.PromiscuousPermissionDenied =>
                        new RawEthernetException($"opening {interfaceName} with libpcap needs root or CAP_NET_RAW", e),
                    PcapError.NoSuchDevice =>
                        new RawEthernetException($"network interface {interfaceName} does not exist (in this network namespace)", e),
                    _ => new RawEthernetException($"libpcap cannot open {interfaceName}: {e.Message} ({e.Error})", e),
                };
            }
            if (refused is not null)
            {
                throw new RawEthernetException($"libpcap cannot configure {interfaceName}: {refused}");
            }
            string filter = $"ether proto 0x{FrameLayout.EtherType:x4}";
            try
            {
                device.Filter = filter;
            }
            catch (PcapException e)
            {
                throw new RawEthernetException($"libpcap cannot filter {interfaceName} with '{filter}': {e.Message}", e);
            }
            device.NonBlockingMode = true;

            nint pcap = device.Handle.DangerousGetHandle();
            if (LibPcap.SetDirection(pcap, LibPcap.DirectionIn) != 0)
            {
                throw new RawEthernetException($"libpcap cannot restrict {interfaceName} to inbound frames: {device.LastError}");
            }
            int fd = LibPcap.SelectableFd(pcap);
            if (fd < 0)
            {
                throw new RawEthernetException($"libpcap gives no descriptor to poll for {interfaceName}");
            }
            // The kernel then does not even copy our own transmissions towards this socket.
            bool ignoresOutgoing = options.IgnoreOutgoingInKernel && PacketSocket.IgnoreOutgoing(fd);
            PacketSocket.RequestBuffer(fd, LibC.SO_SNDBUFFORCE, LibC.SO_SNDBUF, options.SendBufferBytes);
            int flags = LibC.Fcntl(fd, LibC.F_GETFL, 0);
            if (flags < 0 || LibC.Fcntl(fd, LibC.F_SETFL, flags | LibC.O_NONBLOCK) < 0)
            {
                throw new RawEthernetException($"cannot make the libpcap socket of {interfaceName} non-blocking: {LibC.Describe(LibC.Errno)}");
            }
            return new PcapCapture(device, fd, ignoresOutgoing);
        }
        catch
        {
            device.Dispose();
            throw;
        }
    }

    /// <summary>Frames libpcap reports dropped by the kernel (ring full) since the previous call; 0 when unknown.</summary>
    public long TakeNewDrops()
    {
        long total = LibPcap.Drops(Pcap);
        if (total < 0)
        {
            return 0;
        }
        long added = total - DropsSeen;
        DropsSeen = total;
        return added > 0 ? added : 0;
    }

    public void Dispose() => Device.Dispose();
}

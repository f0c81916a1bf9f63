using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>Tunables of one raw-Ethernet link, for either <see cref="LinkDriver"/>.</summary>
public sealed record RawEthernetOptions
{
    /// <summary>Which implementation <c>RawEthernetLinks.Open</c> (in the hosting layer) uses.</summary>
    public LinkDriver Driver { get; init; } = LinkDrivers.Default;

    /// <summary>
    /// Largest frame this link carries, Ethernet header included. The interface's MTU must be at least this minus the
    /// 14-byte Ethernet header, else opening fails. The default is the CamCube jumbo frame (9,014 bytes, MTU 9,000);
    /// a smaller value lets a link run on a 1,500-byte MTU, and frames larger than it are dropped and counted
    /// (<see cref="RawLinkCounters.OversizeDropped"/>), so the services above must then keep their frames that small.
    /// </summary>
    public int MaxFrameSize { get; init; } = FrameLayout.MaxFrameSize;

    /// <summary>Frames the transmit ring holds between two flushes by the event loop.</summary>
    public int TransmitRingSize { get; init; } = 128;

    /// <summary>Frames fetched per recvmmsg call.</summary>
    public int ReceiveBatch { get; init; } = 32;

    /// <summary>
    /// AF_PACKET driver: the socket's kernel receive buffer, a limit that absorbs bursts while the I/O thread is
    /// descheduled (about 1,000 jumbo frames); memory is taken only while frames wait.
    /// </summary>
    public int ReceiveBufferBytes { get; init; } = 16 << 20;

    /// <summary>
    /// pcap driver: the capture ring libpcap maps from the kernel (pcap_set_buffer_size), allocated in full when the
    /// link opens. Each jumbo frame takes a 16 KB slot, so the default holds 512 frames (about 40 ms of a 1 Gbit/s link,
    /// more than a server's whole shuffle receive budget spread over its six links); a 27-server testbed with six links
    /// each maps 162 of them (1.3 GB). Under an unpaced flood on a busy machine 4 MB rings dropped thousands of frames.
    /// </summary>
    public int CaptureBufferBytes { get; init; } = 8 << 20;

    /// <summary>
    /// Kernel send buffer. Kept well below what the interface's queue can hold, so a busy link pushes back with
    /// EAGAIN (the loop then waits for POLLOUT) before the queueing discipline would start dropping frames. It also
    /// bounds the queueing delay a beacon can meet behind data: 1 MB (about 110 jumbo frames after the kernel's
    /// accounting) is about 9 ms at 1 Gbit/s, well inside the default liveness deadline of 3 x 10 ms.
    /// </summary>
    public int SendBufferBytes { get; init; } = 1 << 20;

    /// <summary>How often the I/O thread checks the interface's carrier and reads the kernel's drop counter.</summary>
    public TimeSpan CarrierPollInterval { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>
    /// Ask the kernel not to show us our own transmissions (PACKET_IGNORE_OUTGOING). Belt and braces: a socket bound to
    /// one EtherType is not a tap and does not see outgoing frames anyway, and the I/O thread also drops any frame
    /// marked PACKET_OUTGOING.
    /// </summary>
    public bool IgnoreOutgoingInKernel { get; init; } = true;

    internal void Validate()
    {
        if (MaxFrameSize < FrameLayout.MinFrameSize || MaxFrameSize > FrameLayout.MaxFrameSize)
        {
            throw new ArgumentOutOfRangeException(nameof(MaxFrameSize), MaxFrameSize, $"must be {FrameLayout.MinFrameSize} to {FrameLayout.MaxFrameSize} bytes");
        }
        if (TransmitRingSize is < 1 or > 4096)
        {
            throw new ArgumentOutOfRangeException(nameof(TransmitRingSize), TransmitRingSize, "must be 1 to 4096 frames");
        }
        if (ReceiveBatch is < 1 or > 1024)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveBatch), ReceiveBatch, "must be 1 to 1024 frames");
        }
        if (ReceiveBufferBytes < 1024 || CaptureBufferBytes < 1024 || SendBufferBytes < 1024)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveBufferBytes), "kernel buffers must be at least 1 KB");
        }
        if (CarrierPollInterval <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(CarrierPollInterval), CarrierPollInterval, "must be positive");
        }
    }
}

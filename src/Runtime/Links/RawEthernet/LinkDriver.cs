namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>Which implementation moves a port's raw Ethernet frames.</summary>
public enum LinkDriver
{
    /// <summary>libpcap through SharpPcap (the Pcap driver): one capture handle per port.</summary>
    Pcap,

    /// <summary>AF_PACKET sockets through a few libc calls (<see cref="RawEthernetTransport"/>): recvmmsg/sendmmsg batches.</summary>
    AfPacket,
}

/// <summary>The names configs and the command line use for a <see cref="LinkDriver"/>.</summary>
public static class LinkDrivers
{
    /// <summary>The driver a node uses unless told otherwise (chosen by the link-probe measurements in docs/performance.md).</summary>
    public const LinkDriver Default = LinkDriver.AfPacket;

    /// <summary>"pcap" or "afpacket".</summary>
    public static string Name(this LinkDriver driver) => driver switch
    {
        LinkDriver.Pcap => "pcap",
        LinkDriver.AfPacket => "afpacket",
        _ => throw new ArgumentOutOfRangeException(nameof(driver), driver, null),
    };

    /// <summary>Parses "pcap" or "afpacket" (any case); false for anything else.</summary>
    public static bool TryParse(string? text, out LinkDriver driver)
    {
        switch (text?.Trim().ToLowerInvariant())
        {
            case "pcap":
                driver = LinkDriver.Pcap;
                return true;
            case "afpacket":
                driver = LinkDriver.AfPacket;
                return true;
            default:
                driver = Default;
                return false;
        }
    }
}

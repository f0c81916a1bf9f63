using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.Pcap;
using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Runtime.Hosting;

/// <summary>Opens a port's link with the driver its options name (AF_PACKET or pcap).</summary>
public static class RawEthernetLinks
{
    /// <summary>
    /// Opens <paramref name="interfaceName"/> in the calling thread's network namespace with
    /// <see cref="RawEthernetOptions.Driver"/>. Fails with one clear line (see the drivers' Open).
    /// </summary>
    public static IRawEthernetLink Open(string interfaceName, FramePool pool, RawEthernetOptions? options = null)
    {
        options ??= new RawEthernetOptions();
        return options.Driver switch
        {
            LinkDriver.Pcap => PcapTransport.Open(interfaceName, pool, options),
            _ => RawEthernetTransport.Open(interfaceName, pool, options),
        };
    }
}

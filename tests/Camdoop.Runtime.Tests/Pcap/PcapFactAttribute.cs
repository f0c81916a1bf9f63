using Camdoop.Runtime.Links.Pcap;
using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Runtime.Tests.Pcap;

/// <summary>
/// A test of the pcap link driver: needs root and `ip netns` (like <c>NetnsFact</c>) and libpcap. Skipped, with the
/// reason, when either is missing; test.sh installs libpcap on a machine where it runs as root, so CI runs these.
/// </summary>
public sealed class PcapFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> Unavailable = new(() => NetworkNamespace.WhyUnavailable() ?? PcapTransport.WhyUnavailable());

    public PcapFactAttribute()
    {
        if (Unavailable.Value is { } reason)
        {
            Skip = reason;
        }
    }
}

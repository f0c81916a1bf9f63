using Camdoop.Runtime.Links.Pcap;

namespace Camdoop.Cli.Tests;

/// <summary>A test that needs root and iproute2 (network namespaces). CI runs as root, so there it always runs.</summary>
public sealed class RootFactAttribute : FactAttribute
{
    public RootFactAttribute()
    {
        if (!Camdoop.Cli.Testbed.SystemCommand.IsRoot)
        {
            Skip = "needs root for network namespaces";
        }
        else if (!File.Exists("/usr/sbin/ip") && !File.Exists("/sbin/ip") && !File.Exists("/usr/bin/ip"))
        {
            Skip = "needs iproute2";
        }
    }
}

/// <summary>A theory that needs root and iproute2, like <see cref="RootFactAttribute"/>.</summary>
public sealed class RootTheoryAttribute : TheoryAttribute
{
    public RootTheoryAttribute()
    {
        if (!Camdoop.Cli.Testbed.SystemCommand.IsRoot)
        {
            Skip = "needs root for network namespaces";
        }
        else if (!File.Exists("/usr/sbin/ip") && !File.Exists("/sbin/ip") && !File.Exists("/usr/bin/ip"))
        {
            Skip = "needs iproute2";
        }
    }
}

/// <summary>A test that needs root, iproute2 and libpcap, like <see cref="RootFactAttribute"/>.</summary>
public sealed class PcapRootFactAttribute : FactAttribute
{
    public PcapRootFactAttribute()
    {
        Skip = new RootFactAttribute().Skip ?? PcapTransport.WhyUnavailable();
    }
}

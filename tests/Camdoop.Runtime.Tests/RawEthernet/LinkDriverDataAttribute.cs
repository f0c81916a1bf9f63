using System.Reflection;
using Camdoop.Runtime.Links.Pcap;
using Camdoop.Runtime.Links.RawEthernet;
using Xunit.Sdk;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>
/// One case of a <see cref="TheoryAttribute"/> over the link drivers: the driver is the test's only argument. The case
/// is skipped, with the reason, when what its driver needs is missing: root and `ip netns` for every driver (like
/// <see cref="NetnsFactAttribute"/>), libpcap too for <see cref="LinkDriver.Pcap"/> (like <c>PcapFact</c>), so a
/// machine without libpcap still runs the AF_PACKET cases.
/// </summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = true)]
public sealed class LinkDriverDataAttribute : DataAttribute
{
    private static readonly Lazy<string?> NoNamespaces = new(NetworkNamespace.WhyUnavailable);
    private static readonly Lazy<string?> NoPcap = new(PcapTransport.WhyUnavailable);

    private readonly LinkDriver _driver;

    public LinkDriverDataAttribute(LinkDriver driver)
    {
        _driver = driver;
        string? reason = NoNamespaces.Value ?? (driver == LinkDriver.Pcap ? NoPcap.Value : null);
        if (reason is not null)
        {
            Skip = reason;
        }
    }

    public override IEnumerable<object[]> GetData(MethodInfo testMethod) => [[_driver]];
}

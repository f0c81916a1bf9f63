using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>Whether an interface's MTU carries a link's largest frames (the MTU excludes the Ethernet header).</summary>
public static class LinkMtu
{
    public static bool Fits(int mtu, int maxFrameSize) => mtu >= Needed(maxFrameSize);

    /// <summary>The least MTU that carries <paramref name="maxFrameSize"/>-byte frames.</summary>
    public static int Needed(int maxFrameSize) => maxFrameSize - FrameLayout.EthernetHeaderSize;

    /// <summary>Fails with one line that says how to fix it when <paramref name="mtu"/> is too small.</summary>
    public static void Require(string interfaceName, int mtu, int maxFrameSize)
    {
        int needed = Needed(maxFrameSize);
        if (mtu < needed)
        {
            throw new RawEthernetException(
                $"interface {interfaceName} has MTU {mtu}, but {maxFrameSize}-byte frames need MTU {needed} or more " +
                $"(ip link set dev {interfaceName} mtu {needed}, or configure a smaller maximum frame size)");
        }
    }
}

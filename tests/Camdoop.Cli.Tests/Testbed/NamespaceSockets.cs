using System.Net;
using System.Net.Sockets;
using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Cli.Tests.Testbed;

internal static class NamespaceSockets
{
    /// <summary>A TCP listener bound inside <paramref name="netns"/>; connections are accepted in the background.</summary>
    public static TcpListener ListenIn(string netns, string address, int port)
    {
        var listener = NetworkNamespace.Run(netns, () =>
        {
            var l = new TcpListener(IPAddress.Parse(address), port);
            l.Start();
            return l;
        });
        _ = listener.AcceptTcpClientAsync();
        return listener;
    }
}

using System.Net;
using System.Net.Sockets;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

/// <summary>Binding a front-end's listening sockets (the client port and the web view's) the same way.</summary>
internal static class ListenerBinding
{
    /// <summary>
    /// A started listener on <paramref name="endPoint"/> (address reuse on, so a restarted node binds at once), or a
    /// <see cref="FrontEndException"/> naming <paramref name="what"/> when it cannot be bound.
    /// </summary>
    public static TcpListener Start(IPEndPoint endPoint, string what)
    {
        var listener = new TcpListener(endPoint);
        try
        {
            listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            listener.Start(backlog: 64);
            return listener;
        }
        catch (SocketException e)
        {
            listener.Dispose();
            throw new FrontEndException($"{what} cannot listen on {endPoint}: {e.Message}", e);
        }
    }
}

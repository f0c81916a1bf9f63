using System.Net;
using System.Net.Sockets;
using System.Text;
using Camdoop.FrontEnd.Web;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>The web view's HTTP server on loopback, with a handler that echoes the request (the one class under test).</summary>
public sealed class WebServerTests : IDisposable
{
    private readonly WebServer _server;

    public WebServerTests()
    {
        _server = new WebServer(new IPEndPoint(IPAddress.Loopback, 0), (request, _) => request.Path == "/fail"
            ? throw new InvalidOperationException("handler failed")
            : Task.FromResult(HttpResponse.Text(200, $"{request.Method} {request.Path} q={request.QueryParameter("q")} body={Encoding.ASCII.GetString(request.Body.Span)}")),
            new WebServerOptions { MaxHeadBytes = 1024, MaxBodyBytes = 64, RequestTimeout = TimeSpan.FromSeconds(1) });
        _server.Start();
    }

    [Fact]
    public void AWholeRequestReachesTheHandlerAndItsResponseTheClient()
    {
        string response = Send("POST /login?q=a%20b HTTP/1.1\r\nContent-Length: 7\r\n\r\ntoken=x");
        Assert.StartsWith("HTTP/1.1 200 OK\r\n", response, StringComparison.Ordinal);
        Assert.Contains("\r\nConnection: close\r\n", response, StringComparison.Ordinal);
        Assert.Contains("Content-Security-Policy: default-src 'none';", response, StringComparison.Ordinal);
        Assert.EndsWith("\r\n\r\nPOST /login q=a b body=token=x\n", response, StringComparison.Ordinal);
        Assert.Equal(1, _server.Requests);
    }

    [Fact]
    public void BadRequestsAreAnsweredWithTheirStatusAndCountedAndTheServerServesOn()
    {
        Assert.StartsWith("HTTP/1.1 400 Bad Request\r\n", Send("HELLO\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 431 ", Send("GET / HTTP/1.1\r\nX: " + new string('a', 2000) + "\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 413 ", Send("POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 400 ", Send("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 400 ", Send("GET / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n"), StringComparison.Ordinal);
        Assert.Equal(5, _server.BadRequests);
        Assert.StartsWith("HTTP/1.1 500 ", Send("GET /fail HTTP/1.1\r\n\r\n"), StringComparison.Ordinal);
        Assert.Equal(1, _server.Failures);
        Assert.StartsWith("HTTP/1.1 200 ", Send("GET /still HTTP/1.1\r\n\r\n"), StringComparison.Ordinal);
    }

    [Fact]
    public void AClientTooSlowToSendItsRequestGets408()
    {
        using var client = new TcpClient();
        client.Connect((IPEndPoint)_server.EndPoint);
        var stream = client.GetStream();
        stream.Write("GET / HTTP/1.1\r\n"u8);
        stream.ReadTimeout = 10_000;
        using var reader = new StreamReader(stream, Encoding.ASCII);
        Assert.StartsWith("HTTP/1.1 408 ", reader.ReadToEnd(), StringComparison.Ordinal);
        Assert.Equal(1, _server.BadRequests);
    }

    public void Dispose() => _server.Dispose();

    private string Send(string request)
    {
        using var client = new TcpClient();
        client.Connect((IPEndPoint)_server.EndPoint);
        var stream = client.GetStream();
        stream.Write(Encoding.ASCII.GetBytes(request));
        client.Client.Shutdown(SocketShutdown.Send);
        stream.ReadTimeout = 10_000;
        using var reader = new StreamReader(stream, Encoding.ASCII);
        return reader.ReadToEnd();
    }
}

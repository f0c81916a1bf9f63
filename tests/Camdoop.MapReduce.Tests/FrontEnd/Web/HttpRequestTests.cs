using System.Text;
using Camdoop.FrontEnd.Web;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

public sealed class HttpRequestTests
{
    [Fact]
    public void ARequestHeadIsReadIntoPathQueryHeadersAndCookies()
    {
        var request = Parse("GET /api/query?q=select%20a+from%20links&empty HTTP/1.1\r\nHost: 10.0.0.1:7080\r\nCookie: theme=dark; camdoop_web=abc123\r\nContent-Length: 12");
        Assert.Equal("GET", request.Method);
        Assert.Equal("/api/query", request.Path);
        Assert.Equal("select a from links", request.QueryParameter("q"));
        Assert.Equal("", request.QueryParameter("empty"));
        Assert.Null(request.QueryParameter("missing"));
        Assert.Equal("10.0.0.1:7080", request.Header("HOST"));
        Assert.Equal("abc123", request.Cookie("camdoop_web"));
        Assert.Equal("dark", request.Cookie("theme"));
        Assert.Null(request.Cookie("camdoop"));
        Assert.Equal(12, request.ContentLength);
    }

    [Fact]
    public void RepeatedCookieHeadersAreAllSearched()
    {
        var request = Parse("GET / HTTP/1.1\r\nCookie: a=1\r\nCookie: camdoop_web=t");
        Assert.Equal("1", request.Cookie("a"));
        Assert.Equal("t", request.Cookie("camdoop_web"));
    }

    [Theory]
    [InlineData("GET /", "the request line is not METHOD TARGET HTTP/1.x")]
    [InlineData("get / HTTP/1.1", "the request line is not METHOD TARGET HTTP/1.x")]
    [InlineData("GET / HTTP/2.0", "unsupported protocol version 'HTTP/2.0'")]
    [InlineData("GET http://elsewhere/ HTTP/1.1", "the request target is not a path starting with '/'")]
    [InlineData("GET /a%zz HTTP/1.1", "the path is not valid percent-encoding")]
    [InlineData("GET /?q=%ff%fe HTTP/1.1", "the query string is not valid percent-encoding")]
    [InlineData("GET /?q=%4 HTTP/1.1", "the query string is not valid percent-encoding")]
    [InlineData("GET / HTTP/1.1\r\nno colon here", "header line 1 is not NAME: VALUE")]
    [InlineData("GET / HTTP/1.1\r\nBad Name: x", "header line 1 is not NAME: VALUE")]
    [InlineData("POST /login HTTP/1.1\r\nTransfer-Encoding: chunked", "chunked or encoded request bodies are not accepted; send Content-Length")]
    [InlineData("POST /login HTTP/1.1\r\nContent-Length: -5", "Content-Length is not a number")]
    [InlineData("POST /login HTTP/1.1\r\nContent-Length: 99999999999", "Content-Length is not a number")]
    [InlineData("GET / HTTP/1.1\r\nX: \u0001", "the request head holds a byte that is not printable ASCII")]
    public void AMalformedHeadIsRefusedWithItsReason(string head, string reason)
    {
        Assert.False(HttpRequest.TryParseHead(Encoding.Latin1.GetBytes(head), out var request, out string error));
        Assert.Null(request);
        Assert.Equal(reason, error);
    }

    [Fact]
    public void ANonAsciiByteIsRefused()
    {
        byte[] head = [.. "GET /"u8, 0xC3, 0xA9, .. " HTTP/1.1"u8];
        Assert.False(HttpRequest.TryParseHead(head, out _, out string error));
        Assert.Equal("the request head holds a byte that is not printable ASCII", error);
    }

    [Fact]
    public void FormFieldsAreDecoded()
    {
        var request = Parse("POST /login HTTP/1.1\r\nContent-Length: 19");
        request.Body = "token=ab%2Bc+d&x=1"u8.ToArray();
        var fields = request.FormFields();
        Assert.Equal("ab+c d", fields["token"]);
        Assert.Equal("1", fields["x"]);
    }

    private static HttpRequest Parse(string head)
    {
        Assert.True(HttpRequest.TryParseHead(Encoding.ASCII.GetBytes(head), out var request, out string error), error);
        return request!;
    }
}

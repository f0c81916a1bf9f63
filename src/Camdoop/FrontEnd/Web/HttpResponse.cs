using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Camdoop.FrontEnd.Web;

/// <summary>One HTTP response of the web view: status, content type, body and any extra headers (a cookie, a redirect).</summary>
public sealed record HttpResponse(int Status, string ContentType, ReadOnlyMemory<byte> Body)
{
    // Everything the page needs comes from the front-end itself: no inline script, no other origin, no framing.
    private const string SecurityHeaders =
        "Cache-Control: no-store\r\n" +
        "X-Content-Type-Options: nosniff\r\n" +
        "Referrer-Policy: no-referrer\r\n" +
        "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'\r\n";

    public IReadOnlyList<(string Name, string Value)> Headers { get; init; } = [];

    public static HttpResponse Json<T>(int status, T value) =>
        new(status, "application/json; charset=utf-8", JsonSerializer.SerializeToUtf8Bytes(value, WebJson.Options));

    public static HttpResponse Text(int status, string text) =>
        new(status, "text/plain; charset=utf-8", Encoding.UTF8.GetBytes(text + "\n"));

    public static HttpResponse Error(int status, string message) => Json(status, new { error = message });

    /// <summary>The status line and headers, ready to send before the body.</summary>
    public byte[] Head()
    {
        var head = new StringBuilder(512)
            .Append(CultureInfo.InvariantCulture, $"HTTP/1.1 {Status} {ReasonPhrase(Status)}\r\n")
            .Append(CultureInfo.InvariantCulture, $"Content-Type: {ContentType}\r\n")
            .Append(CultureInfo.InvariantCulture, $"Content-Length: {Body.Length}\r\n")
            .Append("Connection: close\r\n")
            .Append(SecurityHeaders);
        foreach (var (name, value) in Headers)
        {
            head.Append(name).Append(": ").Append(value).Append("\r\n");
        }
        return Encoding.ASCII.GetBytes(head.Append("\r\n").ToString());
    }

    private static string ReasonPhrase(int status) => status switch
    {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
}

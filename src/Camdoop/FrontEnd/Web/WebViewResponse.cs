using System.Text;
using System.Text.Json;
using Microsoft.AspNetCore.Http;

namespace Camdoop.FrontEnd.Web;

/// <summary>One response of the web view: status, content type, body and any extra headers (a cookie, a redirect).</summary>
public sealed record WebViewResponse(int Status, string ContentType, ReadOnlyMemory<byte> Body)
{
    public IReadOnlyList<(string Name, string Value)> Headers { get; init; } = [];

    public static WebViewResponse Json<T>(int status, T value) =>
        new(status, "application/json; charset=utf-8", JsonSerializer.SerializeToUtf8Bytes(value, WebJson.Options));

    public static WebViewResponse Text(int status, string text) =>
        new(status, "text/plain; charset=utf-8", Encoding.UTF8.GetBytes(text + "\n"));

    public static WebViewResponse Error(int status, string message) => Json(status, new { error = message });

    /// <summary>A 303 to <paramref name="location"/>, with <paramref name="headers"/> besides.</summary>
    public static WebViewResponse Redirect(string location, string text, params (string Name, string Value)[] headers) =>
        Text(303, text) with { Headers = [("Location", location), .. headers] };

    /// <summary>Writes the status, the headers and the body.</summary>
    public Task WriteAsync(HttpResponse response, CancellationToken cancellation)
    {
        ArgumentNullException.ThrowIfNull(response);
        response.StatusCode = Status;
        response.ContentType = ContentType;
        response.ContentLength = Body.Length;
        foreach (var (name, value) in Headers)
        {
            response.Headers.Append(name, value);
        }
        return response.Body.WriteAsync(Body, cancellation).AsTask();
    }
}

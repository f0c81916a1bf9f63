using System.Text;

namespace Camdoop.FrontEnd.Web;

/// <summary>
/// One HTTP/1.1 request as the web view's server read it: method, path, query parameters, headers (names in lower
/// case) and body. <see cref="TryParseHead"/> reads the request line and headers; anything it does not understand
/// is refused with the reason, answered 400 by the server.
/// </summary>
public sealed class HttpRequest
{
    private readonly Dictionary<string, string> _headers;
    private readonly Dictionary<string, string> _query;

    private HttpRequest(string method, string path, Dictionary<string, string> query, Dictionary<string, string> headers)
    {
        Method = method;
        Path = path;
        _query = query;
        _headers = headers;
    }

    public string Method { get; }

    /// <summary>The target's path, percent-decoded ("/api/state").</summary>
    public string Path { get; }

    public ReadOnlyMemory<byte> Body { get; internal set; }

    /// <summary>The Content-Length header, 0 without one.</summary>
    public int ContentLength { get; private init; }

    public string? Header(string name) => _headers.GetValueOrDefault(name.ToLowerInvariant());

    public string? QueryParameter(string name) => _query.GetValueOrDefault(name);

    /// <summary>The value of the cookie <paramref name="name"/>, or null.</summary>
    public string? Cookie(string name)
    {
        if (Header("cookie") is not { } cookies)
        {
            return null;
        }
        foreach (var part in cookies.Split(';'))
        {
            int eq = part.IndexOf('=', StringComparison.Ordinal);
            if (eq > 0 && part.AsSpan(0, eq).Trim().SequenceEqual(name))
            {
                return part[(eq + 1)..].Trim();
            }
        }
        return null;
    }

    /// <summary>The body's application/x-www-form-urlencoded fields.</summary>
    public Dictionary<string, string> FormFields()
    {
        var fields = new Dictionary<string, string>(StringComparer.Ordinal);
        ParseQuery(Encoding.ASCII.GetString(Body.Span), fields);
        return fields;
    }

    /// <summary>
    /// Parses the request line and headers (<paramref name="head"/>: everything before the blank line, in ASCII).
    /// Refuses a request line that is not METHOD SP TARGET SP HTTP/1.x, a target that is not an origin path, a
    /// header line without a colon or with control characters, a chunked body, or a Content-Length that is not a
    /// number; <paramref name="error"/> says which.
    /// </summary>
    public static bool TryParseHead(ReadOnlySpan<byte> head, out HttpRequest? request, out string error)
    {
        request = null;
        foreach (byte b in head)
        {
            if (b >= 0x7f || (b < 0x20 && b != (byte)'\r' && b != (byte)'\n' && b != (byte)'\t'))
            {
                error = "the request head holds a byte that is not printable ASCII";
                return false;
            }
        }
        var lines = Encoding.ASCII.GetString(head).Split("\r\n");
        var requestLine = lines[0].Split(' ');
        if (requestLine.Length != 3 || requestLine[0].Length == 0 || !requestLine[0].All(char.IsAsciiLetterUpper))
        {
            error = "the request line is not METHOD TARGET HTTP/1.x";
            return false;
        }
        if (requestLine[2] is not ("HTTP/1.1" or "HTTP/1.0"))
        {
            error = $"unsupported protocol version '{requestLine[2]}'";
            return false;
        }
        string target = requestLine[1];
        if (!target.StartsWith('/'))
        {
            error = "the request target is not a path starting with '/'";
            return false;
        }
        int q = target.IndexOf('?', StringComparison.Ordinal);
        string rawPath = q < 0 ? target : target[..q];
        var query = new Dictionary<string, string>(StringComparer.Ordinal);
        if (q >= 0 && !ParseQuery(target[(q + 1)..], query))
        {
            error = "the query string is not valid percent-encoding";
            return false;
        }
        if (!TryDecode(rawPath, plusIsSpace: false, out string path))
        {
            error = "the path is not valid percent-encoding";
            return false;
        }
        var headers = new Dictionary<string, string>(StringComparer.Ordinal);
        for (int i = 1; i < lines.Length; i++)
        {
            string line = lines[i];
            int colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0 || line[..colon].Any(c => c is ' ' or '\t'))
            {
                error = $"header line {i} is not NAME: VALUE";
                return false;
            }
            string name = line[..colon].ToLowerInvariant();
            string value = line[(colon + 1)..].Trim();
            // Repeated headers are joined, as HTTP allows for list-valued ones; a cookie header joins with ';'.
            headers[name] = headers.TryGetValue(name, out var earlier) ? earlier + (name == "cookie" ? "; " : ", ") + value : value;
        }
        if (headers.ContainsKey("transfer-encoding"))
        {
            error = "chunked or encoded request bodies are not accepted; send Content-Length";
            return false;
        }
        int length = 0;
        if (headers.TryGetValue("content-length", out var lengthText) && (!int.TryParse(lengthText, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out length)))
        {
            error = "Content-Length is not a number";
            return false;
        }
        request = new HttpRequest(requestLine[0], path, query, headers) { ContentLength = length };
        error = "";
        return true;
    }

    private static bool ParseQuery(string text, Dictionary<string, string> into)
    {
        foreach (var pair in text.Split('&', StringSplitOptions.RemoveEmptyEntries))
        {
            int eq = pair.IndexOf('=', StringComparison.Ordinal);
            string rawName = eq < 0 ? pair : pair[..eq];
            string rawValue = eq < 0 ? "" : pair[(eq + 1)..];
            if (!TryDecode(rawName, plusIsSpace: true, out var name) || !TryDecode(rawValue, plusIsSpace: true, out var value))
            {
                return false;
            }
            into[name] = value;
        }
        return true;
    }

    /// <summary>Percent-decodes UTF-8; false on a broken escape or bytes that are not UTF-8.</summary>
    private static bool TryDecode(string text, bool plusIsSpace, out string decoded)
    {
        decoded = text;
        if (!text.Contains('%', StringComparison.Ordinal) && !(plusIsSpace && text.Contains('+', StringComparison.Ordinal)))
        {
            return true;
        }
        var bytes = new List<byte>(text.Length);
        for (int i = 0; i < text.Length; i++)
        {
            char c = text[i];
            if (c == '%')
            {
                if (i + 2 >= text.Length || !byte.TryParse(text.AsSpan(i + 1, 2), System.Globalization.NumberStyles.AllowHexSpecifier, System.Globalization.CultureInfo.InvariantCulture, out byte b))
                {
                    return false;
                }
                bytes.Add(b);
                i += 2;
            }
            else
            {
                bytes.Add(c == '+' && plusIsSpace ? (byte)' ' : (byte)c);
            }
        }
        try
        {
            decoded = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString([.. bytes]);
            return true;
        }
        catch (DecoderFallbackException)
        {
            return false;
        }
    }
}

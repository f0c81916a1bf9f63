using System.Security.Cryptography;
using System.Text;
using Camdoop.FrontEnd.Auth;

namespace Camdoop.FrontEnd.Web;

/// <summary>
/// The web view's credential: HMAC-SHA256(cluster key, "camdoop-web-view-1") as 64 hex digits. A browser cannot run
/// the front-end's challenge-response, so it presents this token instead (a cookie set by the login form, or an
/// <c>Authorization: Bearer</c> header). It is derived from the key, so only a holder of the key can make it, and it
/// gives no more than the page does: the token cannot be turned back into the key or used on the TCP front-end.
/// </summary>
public sealed class WebToken
{
    /// <summary>The cookie the login form sets.</summary>
    public const string CookieName = "camdoop_web";

    private static readonly byte[] Label = Encoding.ASCII.GetBytes("camdoop-web-view-1");
    private readonly byte[] _ascii;

    public WebToken(ClusterKey key)
    {
        ArgumentNullException.ThrowIfNull(key);
        Span<byte> mac = stackalloc byte[32];
        key.Mac(Label, mac);
        Value = Convert.ToHexStringLower(mac);
        _ascii = Encoding.ASCII.GetBytes(Value);
    }

    /// <summary>The token, 64 lower-case hex digits.</summary>
    public string Value { get; }

    /// <summary>Whether <paramref name="candidate"/> is the token, in time independent of where it differs.</summary>
    public bool Matches(ReadOnlySpan<char> candidate)
    {
        if (candidate.Length != _ascii.Length)
        {
            return false;
        }
        Span<byte> bytes = stackalloc byte[64];
        for (int i = 0; i < candidate.Length; i++)
        {
            // Anything outside ASCII becomes a byte no hex digit equals.
            bytes[i] = candidate[i] < 128 ? (byte)char.ToLowerInvariant(candidate[i]) : (byte)0;
        }
        return CryptographicOperations.FixedTimeEquals(bytes, _ascii);
    }

    /// <summary>Whether the request carries the token: in its cookie or as a bearer token.</summary>
    public bool Authorizes(HttpRequest request)
    {
        ArgumentNullException.ThrowIfNull(request);
        if (request.Header("authorization") is { } auth && auth.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase) && Matches(auth.AsSpan(7).Trim()))
        {
            return true;
        }
        return request.Cookie(CookieName) is { } cookie && Matches(cookie);
    }
}

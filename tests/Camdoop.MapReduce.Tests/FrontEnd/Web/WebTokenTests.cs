using System.Security.Cryptography;
using System.Text;
using Camdoop.FrontEnd.Auth;
using Camdoop.FrontEnd.Web;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

public sealed class WebTokenTests
{
    private static readonly byte[] Secret = [.. Enumerable.Range(0, 32).Select(i => (byte)(i * 7 + 3))];

    [Fact]
    public void TheTokenIsTheKeysHmacOfTheWebLabelInHex()
    {
        string expected = Convert.ToHexString(HMACSHA256.HashData(Secret, Encoding.ASCII.GetBytes("camdoop-web-view-1"))).ToLowerInvariant();
        Assert.Equal(expected, new WebToken(ClusterKey.FromBytes(Secret)).Value);
        var other = Secret.ToArray();
        other[0] ^= 1;
        Assert.NotEqual(expected, new WebToken(ClusterKey.FromBytes(other)).Value);
    }

    [Fact]
    public void OnlyTheTokenMatches()
    {
        var token = new WebToken(ClusterKey.FromBytes(Secret));
        string value = token.Value;
        Assert.True(token.Matches(value));
        Assert.True(token.Matches(value.ToUpperInvariant()));
        Assert.False(token.Matches(value.AsSpan(0, 63)));
        Assert.False(token.Matches(value + "0"));
        Assert.False(token.Matches(value[..63] + (value[63] == '0' ? '1' : '0')));
        Assert.False(token.Matches(value[..63] + "\u0130"));
        Assert.False(token.Matches(""));
    }

    [Fact]
    public void ARequestIsAuthorizedByTheCookieOrABearerHeaderOnly()
    {
        var token = new WebToken(ClusterKey.FromBytes(Secret));
        Assert.True(token.Authorizes(Request($"Cookie: other=1; camdoop_web={token.Value}")));
        Assert.True(token.Authorizes(Request($"Authorization: Bearer {token.Value}")));
        Assert.False(token.Authorizes(Request("Cookie: camdoop_web=" + new string('a', 64))));
        Assert.False(token.Authorizes(Request($"Cookie: other={token.Value}")));
        Assert.False(token.Authorizes(Request($"Authorization: Basic {token.Value}")));
        Assert.False(token.Authorizes(Request("X-Nothing: 1")));
    }

    private static HttpRequest Request(string header)
    {
        Assert.True(HttpRequest.TryParseHead(Encoding.ASCII.GetBytes($"GET /api/state HTTP/1.1\r\n{header}"), out var request, out string error), error);
        return request!;
    }
}

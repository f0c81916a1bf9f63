using System.Security.Cryptography;
using Camdoop.FrontEnd.Web;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>The web view's login codes, sessions and scrape tokens, on a clock the tests move.</summary>
public sealed class WebSessionsTests
{
    private readonly ManualClock _clock = new();
    private readonly WebSessions _sessions;

    public WebSessionsTests()
    {
        _sessions = new WebSessions(TimeSpan.FromHours(8), _clock);
    }

    [Fact]
    public void ACodeIs32RandomBytesInHexAndOpensOneSession()
    {
        string code = _sessions.IssueLoginCode();
        Assert.Matches("^[0-9a-f]{64}$", code);
        Assert.NotEqual(code, _sessions.IssueLoginCode());

        Assert.True(_sessions.TryLogin(code, out string session, out string refusal), refusal);
        Assert.Matches("^[0-9a-f]{64}$", session);
        Assert.NotEqual(code, session);
        Assert.True(_sessions.IsLive(session));
        Assert.Equal(1, _sessions.Count);
    }

    [Fact]
    public void ACodeWorksOnceAndASecondTrySaysItWasUsed()
    {
        string code = _sessions.IssueLoginCode();
        Assert.True(_sessions.TryLogin(code, out _, out _));
        Assert.False(_sessions.TryLogin(code, out string session, out string refusal));
        Assert.Equal("", session);
        Assert.Equal("that login code was used already; ask for a new one with 'camdoop web'", refusal);
        Assert.Equal(1, _sessions.Count);
    }

    [Fact]
    public void ACodeExpiresAfterAMinute()
    {
        string late = _sessions.IssueLoginCode();
        string inTime = _sessions.IssueLoginCode();
        _clock.Advance(WebSessions.CodeLifetime - TimeSpan.FromSeconds(1));
        Assert.True(_sessions.TryLogin(inTime, out _, out string refusal), refusal);
        _clock.Advance(TimeSpan.FromSeconds(1));
        Assert.False(_sessions.TryLogin(late, out _, out refusal));
        Assert.StartsWith("that login code expired (a code is good for 60 s)", refusal, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(null, "that is not a login code")]
    [InlineData("", "that is not a login code")]
    [InlineData("xyz", "that is not a login code")]
    [InlineData("0000000000000000000000000000000000000000000000000000000000000000", "unknown login code")]
    [InlineData("zz00000000000000000000000000000000000000000000000000000000000000", "that is not a login code")]
    public void AWrongCodeIsRefusedWithItsReason(string? code, string reason)
    {
        _sessions.IssueLoginCode();
        Assert.False(_sessions.TryLogin(code, out _, out string refusal));
        Assert.StartsWith(reason, refusal, StringComparison.Ordinal);
        Assert.Equal(0, _sessions.Count);
    }

    [Fact]
    public void ASessionLastsItsLifetimeFromLoginAndNoLonger()
    {
        Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out string session, out _));
        _clock.Advance(TimeSpan.FromHours(8) - TimeSpan.FromSeconds(1));
        // Being used does not extend it: the lifetime is absolute.
        Assert.True(_sessions.IsLive(session));
        _clock.Advance(TimeSpan.FromSeconds(1));
        Assert.False(_sessions.IsLive(session));
        Assert.Equal(0, _sessions.Count);
    }

    [Fact]
    public void ALifetimeCanBeSetAndIsAtLeastASecond()
    {
        var shortLived = new WebSessions(TimeSpan.FromMinutes(5), _clock);
        Assert.True(shortLived.TryLogin(shortLived.IssueLoginCode(), out string session, out _));
        _clock.Advance(TimeSpan.FromMinutes(5));
        Assert.False(shortLived.IsLive(session));
        Assert.Throws<ArgumentOutOfRangeException>(() => new WebSessions(TimeSpan.Zero));
        Assert.Equal(WebSessions.DefaultSessionLifetime, new WebSessions().SessionLifetime);
    }

    [Fact]
    public void ALogoutEndsThatSessionOnly()
    {
        Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out string first, out _));
        Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out string second, out _));
        Assert.True(_sessions.End(first));
        Assert.False(_sessions.End(first));
        Assert.False(_sessions.IsLive(first));
        Assert.True(_sessions.IsLive(second));
        Assert.False(_sessions.End("not a session"));
    }

    [Fact]
    public void RevokeAllEndsEverySessionAndVoidsUnusedCodes()
    {
        Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out string first, out _));
        Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out string second, out _));
        string unused = _sessions.IssueLoginCode();

        Assert.Equal(new WebRevocation(Sessions: 2, LoginCodes: 1), _sessions.RevokeAll());
        Assert.False(_sessions.IsLive(first));
        Assert.False(_sessions.IsLive(second));
        Assert.False(_sessions.TryLogin(unused, out _, out string refusal));
        Assert.StartsWith("unknown login code", refusal, StringComparison.Ordinal);
        Assert.Equal(new WebRevocation(0, 0), _sessions.RevokeAll());

        // A code issued after the revocation works as any.
        Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out string third, out _));
        Assert.True(_sessions.IsLive(third));
    }

    [Fact]
    public void ExpiredSessionsAndCodesAreNotCountedAsRevoked()
    {
        Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out _, out _));
        _sessions.IssueLoginCode();
        _clock.Advance(TimeSpan.FromHours(9));
        Assert.Equal(new WebRevocation(0, 0), _sessions.RevokeAll());
    }

    [Fact]
    public void OnlyHashesOfCodesAndSessionsAreKept()
    {
        string used = _sessions.IssueLoginCode();
        string unused = _sessions.IssueLoginCode();
        Assert.True(_sessions.TryLogin(used, out string session, out _));
        var stored = _sessions.StoredHashes();
        Assert.Equal(3, stored.Count);
        var expected = new[] { used, unused, session }.Select(s => SHA256.HashData(Convert.FromHexString(s))).ToList();
        Assert.All(expected, hash => Assert.Contains(stored, s => s.AsSpan().SequenceEqual(hash)));
        // Nothing kept is a secret itself, in bytes or in text.
        foreach (string secret in new[] { used, unused, session })
        {
            Assert.DoesNotContain(stored, s => s.AsSpan().SequenceEqual(Convert.FromHexString(secret)));
            Assert.DoesNotContain(stored, s => Convert.ToHexStringLower(s) == secret);
        }
    }

    [Fact]
    public void TheTablesAreBoundedAndTheOldestGivesWay()
    {
        string first = _sessions.IssueLoginCode();
        for (int i = 1; i < WebSessions.MaxCodes; i++)
        {
            _clock.Advance(TimeSpan.FromMilliseconds(1));
            _sessions.IssueLoginCode();
        }
        string last = _sessions.IssueLoginCode();
        Assert.False(_sessions.TryLogin(first, out _, out _));
        Assert.True(_sessions.TryLogin(last, out _, out _));

        string? oldest = null;
        for (int i = 0; i < WebSessions.MaxSessions + 1; i++)
        {
            _clock.Advance(TimeSpan.FromMilliseconds(1));
            Assert.True(_sessions.TryLogin(_sessions.IssueLoginCode(), out string session, out _));
            oldest ??= session;
        }
        Assert.Equal(WebSessions.MaxSessions, _sessions.Count);
        Assert.False(_sessions.IsLive(oldest));
    }

    [Fact]
    public void AScrapeTokenLastsItsLifetimeAndOpensNoSession()
    {
        var (token, expires) = _sessions.IssueScrapeToken(TimeSpan.FromDays(30));
        Assert.Matches("^[0-9a-f]{64}$", token);
        Assert.Equal(_clock.GetUtcNow() + TimeSpan.FromDays(30), expires);
        Assert.True(_sessions.IsScrapeToken(token));
        Assert.False(_sessions.IsLive(token));
        Assert.False(_sessions.TryLogin(token, out _, out _));
        Assert.Equal(1, _sessions.ScrapeTokenCount);
        Assert.False(_sessions.IsScrapeToken(token.ToUpperInvariant()[..63] + "g"));
        Assert.False(_sessions.IsScrapeToken(null));
        // Only its hash is kept.
        var hash = SHA256.HashData(Convert.FromHexString(token));
        Assert.Contains(_sessions.StoredHashes(), s => s.AsSpan().SequenceEqual(hash));
        Assert.DoesNotContain(_sessions.StoredHashes(), s => Convert.ToHexStringLower(s) == token);

        _clock.Advance(TimeSpan.FromDays(30) - TimeSpan.FromSeconds(1));
        Assert.True(_sessions.IsScrapeToken(token));
        _clock.Advance(TimeSpan.FromSeconds(1));
        Assert.False(_sessions.IsScrapeToken(token));
        Assert.Equal(0, _sessions.ScrapeTokenCount);
        Assert.Equal(0, _sessions.RevokeScrapeTokens());
    }

    [Fact]
    public void ScrapeTokensAreBoundedAndTheirLifetimeIsChecked()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => _sessions.IssueScrapeToken(TimeSpan.Zero));
        Assert.Throws<ArgumentOutOfRangeException>(() => _sessions.IssueScrapeToken(WebSessions.MaxScrapeTokenLifetime + TimeSpan.FromSeconds(1)));
        string first = _sessions.IssueScrapeToken(TimeSpan.FromDays(1)).Token;
        var tokens = Enumerable.Range(0, WebSessions.MaxScrapeTokens).Select(i => _sessions.IssueScrapeToken(TimeSpan.FromDays(2 + i)).Token).ToList();
        Assert.Equal(WebSessions.MaxScrapeTokens, _sessions.ScrapeTokenCount);
        Assert.False(_sessions.IsScrapeToken(first));
        Assert.All(tokens, t => Assert.True(_sessions.IsScrapeToken(t)));
        Assert.Equal(WebSessions.MaxScrapeTokens, _sessions.RevokeScrapeTokens());
        Assert.All(tokens, t => Assert.False(_sessions.IsScrapeToken(t)));
    }
}

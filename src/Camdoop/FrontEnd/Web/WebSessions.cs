using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics.CodeAnalysis;
using System.Security.Cryptography;

namespace Camdoop.FrontEnd.Web;

/// <summary>
/// Who may see the web view: one-time login codes, handed to front-end clients (`camdoop web`), and the browser
/// sessions they open; and the bearer tokens of metrics scrapers (`camdoop metrics --token`), which open /metrics
/// only. A code is 32 random bytes, good once within <see cref="CodeLifetime"/>; a session is 32 random bytes more,
/// carried in a cookie, good for <see cref="SessionLifetime"/> from its login (an absolute lifetime: polling does not
/// extend it) or until it logs out or <see cref="RevokeAll"/> ends it; a scrape token is 32 random bytes good for the
/// days it was issued for, or until <see cref="RevokeScrapeTokens"/>. Only the SHA-256 of a code, a session id or a
/// token is kept, so a copy of this process's memory opens nothing, and one presented is compared with the one kept
/// in constant time. Safe to call from any thread; never blocks on I/O.
/// </summary>
public sealed class WebSessions
{
    /// <summary>The cookie a session travels in.</summary>
    public const string CookieName = "camdoop_session";

    /// <summary>Sessions at once, at most: the oldest gives way, so that logins in a loop cannot grow the table without bound.</summary>
    public const int MaxSessions = 1024;

    /// <summary>Codes remembered at once, at most: the oldest gives way.</summary>
    public const int MaxCodes = 256;

    /// <summary>Scrape tokens at once, at most: the one that expires first gives way.</summary>
    public const int MaxScrapeTokens = 64;

    /// <summary>The longest a scrape token may last.</summary>
    public static readonly TimeSpan MaxScrapeTokenLifetime = TimeSpan.FromDays(366);

    /// <summary>How long a session lasts unless told otherwise: a working day.</summary>
    public static readonly TimeSpan DefaultSessionLifetime = TimeSpan.FromHours(8);

    /// <summary>How long a login code is good: long enough to paste a link into a browser, short enough to leave no standing secret.</summary>
    public static readonly TimeSpan CodeLifetime = TimeSpan.FromSeconds(60);

    // A code used or expired is remembered this long after its expiry, so that a second try says why it fails.
    private static readonly TimeSpan CodeMemory = TimeSpan.FromMinutes(10);

    private const int SecretBytes = 32;

    private readonly TimeProvider _clock;
    private readonly Lock _gate = new();
    private readonly Dictionary<ulong, Entry> _codes = [];
    private readonly Dictionary<ulong, Entry> _sessions = [];
    private readonly Dictionary<ulong, Entry> _scrapeTokens = [];

    /// <param name="sessionLifetime">How long a session lasts from its login (null: <see cref="DefaultSessionLifetime"/>).</param>
    /// <param name="clock">The clock expiry is measured on (null: the system's).</param>
    public WebSessions(TimeSpan? sessionLifetime = null, TimeProvider? clock = null)
    {
        SessionLifetime = sessionLifetime ?? DefaultSessionLifetime;
        ArgumentOutOfRangeException.ThrowIfLessThan(SessionLifetime, TimeSpan.FromSeconds(1), nameof(sessionLifetime));
        _clock = clock ?? TimeProvider.System;
    }

    public TimeSpan SessionLifetime { get; }

    /// <summary>Sessions that are live now.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                Sweep(_clock.GetUtcNow());
                return _sessions.Count;
            }
        }
    }

    /// <summary>A new login code: 64 lower-case hex digits, good once within <see cref="CodeLifetime"/>.</summary>
    public string IssueLoginCode()
    {
        lock (_gate)
        {
            var now = _clock.GetUtcNow();
            Sweep(now);
            if (_codes.Count >= MaxCodes)
            {
                // Codes used already go first: they are kept only to say why a second try fails.
                RemoveOldest(_codes, _codes.Values.Any(c => c.Used) ? c => c.Used : _ => true);
            }
            return Add(_codes, now + CodeLifetime);
        }
    }

    /// <summary>
    /// Opens a session with <paramref name="code"/>, using the code up. False, with the reason in one line, for a code
    /// that is malformed, unknown, used already or expired.
    /// </summary>
    public bool TryLogin(string? code, out string sessionId, out string refusal)
    {
        sessionId = "";
        if (!TryHash(code, out var hash))
        {
            refusal = "that is not a login code ('camdoop web' prints a link with one)";
            return false;
        }
        lock (_gate)
        {
            var now = _clock.GetUtcNow();
            Sweep(now);
            if (!TryFind(_codes, hash, out ulong key, out var entry))
            {
                refusal = "unknown login code; ask for a new one with 'camdoop web'";
                return false;
            }
            if (entry.Used)
            {
                refusal = "that login code was used already; ask for a new one with 'camdoop web'";
                return false;
            }
            if (entry.Expires <= now)
            {
                refusal = $"that login code expired (a code is good for {CodeLifetime.TotalSeconds:0} s); ask for a new one with 'camdoop web'";
                return false;
            }
            _codes[key] = entry with { Used = true };
            if (_sessions.Count >= MaxSessions)
            {
                RemoveOldest(_sessions, _ => true);
            }
            sessionId = Add(_sessions, now + SessionLifetime);
            refusal = "";
            return true;
        }
    }

    /// <summary>Whether <paramref name="sessionId"/> names a live session.</summary>
    public bool IsLive(string? sessionId)
    {
        if (!TryHash(sessionId, out var hash))
        {
            return false;
        }
        lock (_gate)
        {
            var now = _clock.GetUtcNow();
            return TryFind(_sessions, hash, out _, out var entry) && entry.Expires > now;
        }
    }

    /// <summary>Ends the session <paramref name="sessionId"/> (a logout); false when it was not live.</summary>
    public bool End(string? sessionId)
    {
        if (!TryHash(sessionId, out var hash))
        {
            return false;
        }
        lock (_gate)
        {
            return TryFind(_sessions, hash, out ulong key, out var entry) && _sessions.Remove(key) && entry.Expires > _clock.GetUtcNow();
        }
    }

    /// <summary>
    /// Ends every session and forgets every unused login code: whoever could see the view must log in again with a
    /// new code. The cluster's keys and certificates stay as they are, and so do scrape tokens (a scraper is no
    /// browser; <see cref="RevokeScrapeTokens"/> voids them).
    /// </summary>
    public WebRevocation RevokeAll()
    {
        lock (_gate)
        {
            var now = _clock.GetUtcNow();
            int sessions = _sessions.Values.Count(s => s.Expires > now);
            int codes = _codes.Values.Count(c => !c.Used && c.Expires > now);
            _sessions.Clear();
            _codes.Clear();
            return new WebRevocation(sessions, codes);
        }
    }

    /// <summary>Scrape tokens that are live now.</summary>
    public int ScrapeTokenCount
    {
        get
        {
            lock (_gate)
            {
                Sweep(_clock.GetUtcNow());
                return _scrapeTokens.Count;
            }
        }
    }

    /// <summary>A new bearer token for /metrics, good for <paramref name="lifetime"/>: 64 lower-case hex digits, and when it expires.</summary>
    public (string Token, DateTimeOffset Expires) IssueScrapeToken(TimeSpan lifetime)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(lifetime, TimeSpan.FromSeconds(1));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(lifetime, MaxScrapeTokenLifetime);
        lock (_gate)
        {
            var now = _clock.GetUtcNow();
            Sweep(now);
            if (_scrapeTokens.Count >= MaxScrapeTokens)
            {
                RemoveOldest(_scrapeTokens, _ => true);
            }
            var expires = now + lifetime;
            return (Add(_scrapeTokens, expires), expires);
        }
    }

    /// <summary>Whether <paramref name="token"/> is a live scrape token.</summary>
    public bool IsScrapeToken(string? token)
    {
        if (!TryHash(token, out var hash))
        {
            return false;
        }
        lock (_gate)
        {
            return TryFind(_scrapeTokens, hash, out _, out var entry) && entry.Expires > _clock.GetUtcNow();
        }
    }

    /// <summary>Voids every scrape token; how many were live. Sessions and login codes stay.</summary>
    public int RevokeScrapeTokens()
    {
        lock (_gate)
        {
            var now = _clock.GetUtcNow();
            int live = _scrapeTokens.Values.Count(t => t.Expires > now);
            _scrapeTokens.Clear();
            return live;
        }
    }

    /// <summary>The hashes kept, for tests: never a code or a session id itself.</summary>
    internal IReadOnlyList<byte[]> StoredHashes()
    {
        lock (_gate)
        {
            return [.. _codes.Values.Select(e => e.Hash), .. _sessions.Values.Select(e => e.Hash), .. _scrapeTokens.Values.Select(e => e.Hash)];
        }
    }

    /// <summary>Makes a new secret, keeps its hash with <paramref name="expires"/>, and returns it in hex.</summary>
    private static string Add(Dictionary<ulong, Entry> table, DateTimeOffset expires)
    {
        Span<byte> secret = stackalloc byte[SecretBytes];
        while (true)
        {
            RandomNumberGenerator.Fill(secret);
            byte[] hash = SHA256.HashData(secret);
            // The first 8 bytes of the hash index the table; two secrets sharing them (2^-64 a pair) draw again.
            if (table.TryAdd(Key(hash), new Entry(hash, expires, Used: false)))
            {
                return Convert.ToHexStringLower(secret);
            }
        }
    }

    /// <summary>
    /// The entry whose hash is <paramref name="hash"/>. The table lookup reveals at most whether the first 8 bytes of a
    /// SHA-256 match, which tells a guesser nothing about the secret; the whole hash is compared in constant time.
    /// </summary>
    private static bool TryFind(Dictionary<ulong, Entry> table, byte[] hash, out ulong key, [NotNullWhen(true)] out Entry? entry)
    {
        key = Key(hash);
        if (table.TryGetValue(key, out entry) && CryptographicOperations.FixedTimeEquals(entry.Hash, hash))
        {
            return true;
        }
        entry = null;
        return false;
    }

    /// <summary>The SHA-256 of a secret given as 64 hex digits; false for anything else.</summary>
    private static bool TryHash(string? hex, out byte[] hash)
    {
        hash = [];
        if (hex is null || hex.Length != SecretBytes * 2)
        {
            return false;
        }
        Span<byte> secret = stackalloc byte[SecretBytes];
        if (Convert.FromHexString(hex, secret, out _, out int written) != OperationStatus.Done || written != SecretBytes)
        {
            return false;
        }
        hash = SHA256.HashData(secret);
        return true;
    }

    private static ulong Key(byte[] hash) => BinaryPrimitives.ReadUInt64LittleEndian(hash);

    private void Sweep(DateTimeOffset now)
    {
        foreach (var (key, session) in _sessions)
        {
            if (session.Expires <= now)
            {
                _sessions.Remove(key);
            }
        }
        foreach (var (key, token) in _scrapeTokens)
        {
            if (token.Expires <= now)
            {
                _scrapeTokens.Remove(key);
            }
        }
        foreach (var (key, code) in _codes)
        {
            if (code.Expires + CodeMemory <= now)
            {
                _codes.Remove(key);
            }
        }
    }

    private static void RemoveOldest(Dictionary<ulong, Entry> table, Func<Entry, bool> which)
    {
        var oldest = table.Where(e => which(e.Value)).MinBy(e => e.Value.Expires);
        table.Remove(oldest.Key);
    }

    private sealed record Entry(byte[] Hash, DateTimeOffset Expires, bool Used);
}

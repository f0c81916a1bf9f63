namespace Camdoop.FrontEnd;

/// <summary>
/// The live web view as a front-end session sees it (FrontEndSession.Web.cs, .Metrics.cs): where it serves, its logins
/// and its scrape tokens. The view itself (Web/WebView.cs) builds on the front-end, so the front-end knows it only
/// through this.
/// </summary>
public interface IWebLogins
{
    /// <summary>The TCP port the view serves HTTPS on; null while it serves nothing.</summary>
    int? Port { get; }

    /// <summary>How long a login code is good.</summary>
    TimeSpan CodeLifetime { get; }

    /// <summary>How long a session lasts from its login.</summary>
    TimeSpan SessionLifetime { get; }

    /// <summary>A new one-time login code.</summary>
    string IssueLoginCode();

    /// <summary>Ends every session and voids every unused code; how many of each.</summary>
    (int Sessions, int LoginCodes) RevokeAll();

    /// <summary>A new bearer token for the view's /metrics, good for <paramref name="lifetime"/>, and when it expires.</summary>
    (string Token, DateTimeOffset Expires) IssueScrapeToken(TimeSpan lifetime);

    /// <summary>Voids every scrape token; how many were live.</summary>
    int RevokeScrapeTokens();
}

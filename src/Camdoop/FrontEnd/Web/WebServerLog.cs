using Microsoft.Extensions.Logging;

namespace Camdoop.FrontEnd.Web;

/// <summary>
/// Where the web server's own logging goes (ASP.NET Core's <see cref="ILogger"/>s): never to the console. Kestrel's
/// events about what clients did wrong are counted, not written (a client could write as many as it likes);
/// anything else of warning level or above is one line for the node's log, at most one a second (and a summary).
/// </summary>
internal sealed class WebServerLog : ILoggerProvider
{
    /// <summary>Kestrel's category for requests it refuses unread (malformed, headers too large, too slow).</summary>
    public const string BadRequestCategory = "Microsoft.AspNetCore.Server.Kestrel.BadRequests";

    /// <summary>Kestrel's category for its TLS handshakes.</summary>
    public const string HttpsCategory = "Microsoft.AspNetCore.Server.Kestrel.Https";

    private readonly ThrottledLog _log;
    private readonly Action<WebServerEvent> _count;

    public WebServerLog(Action<string> log, Action<WebServerEvent> count)
    {
        _log = new ThrottledLog(line => log("web view: " + line), TimeSpan.FromSeconds(1));
        _count = count;
    }

    /// <summary>Writes a line of the server's own (throttled as Kestrel's are).</summary>
    public void Write(string line) => _log.Write(line);

    public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

    public void Dispose() => _log.Dispose();

    /// <summary>Which counted event <paramref name="id"/> is (Kestrel's event names), or null for one only logged.</summary>
    private static WebServerEvent? Counted(EventId id) => id.Name switch
    {
        "ConnectionBadRequest" => WebServerEvent.BadRequest,
        "ConnectionRejected" => WebServerEvent.ConnectionRefused,
        "AuthenticationFailed" or "AuthenticationTimedOut" => WebServerEvent.HandshakeFailed,
        _ => null,
    };

    private sealed class Logger(WebServerLog owner, string category) : ILogger
    {
        // Kestrel writes the events counted at debug level: those categories must reach this logger at that level.
        private readonly LogLevel _minimum = category.StartsWith(BadRequestCategory, StringComparison.Ordinal) || category.StartsWith(HttpsCategory, StringComparison.Ordinal)
            ? LogLevel.Debug
            : LogLevel.Warning;

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= _minimum && logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel))
            {
                return;
            }
            if (Counted(eventId) is { } counted)
            {
                owner._count(counted);
                return;
            }
            if (logLevel >= LogLevel.Warning)
            {
                string message = formatter(state, exception);
                owner._log.Write(exception is null ? message : $"{message}: {exception.Message}");
            }
        }
    }
}

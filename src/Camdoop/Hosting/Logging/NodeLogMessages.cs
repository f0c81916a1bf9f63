using Microsoft.Extensions.Logging;

namespace Camdoop.Hosting.Logging;

/// <summary>
/// The node's events as message templates, so that a JSON line carries their values as fields ("State") and not
/// only in the message. The runtime's and the services' events arrive as finished text (<see cref="RuntimeEvent"/>):
/// services log through the host's <c>Log(level, message)</c> and know no logging library.
/// </summary>
public static partial class NodeLogMessages
{
    [LoggerMessage(EventId = 1, Level = LogLevel.Information, Message = "starting: torus {Torus}, pid {Pid}, data {DataDirectory}, link driver {LinkDriver}, ports {Ports}")]
    public static partial void Starting(ILogger logger, string torus, int pid, string dataDirectory, string linkDriver, string ports);

    [LoggerMessage(EventId = 2, Level = LogLevel.Information, Message = "stopped")]
    public static partial void Stopped(ILogger logger);

    [LoggerMessage(EventId = 3, Level = LogLevel.Warning, Message = "cannot write {StatusPath}: {Reason}")]
    public static partial void StatusNotWritten(ILogger logger, string statusPath, string reason);

    [LoggerMessage(EventId = 4, Level = LogLevel.Warning, Message = "status snapshot: the event loop did not answer within {TimeoutSeconds} s")]
    public static partial void StatusSnapshotLate(ILogger logger, int timeoutSeconds);

    [LoggerMessage(EventId = 5, Level = LogLevel.Information, Message = "front-end listening on {EndPoint} (mutual TLS 1.3 under the cluster CA in {CertsDirectory}, as {Identity})")]
    public static partial void FrontEndListening(ILogger logger, string endPoint, string certsDirectory, string identity);

    [LoggerMessage(EventId = 6, Level = LogLevel.Information, Message = "web view on https://{EndPoint}/ with {CertificateSource}; sessions last {SessionHours} h, logins with codes from 'camdoop web'")]
    public static partial void WebViewListening(ILogger logger, string endPoint, string certificateSource, double sessionHours);

    /// <summary>A warning line from a component that reports in text (credentials, front-end, web view).</summary>
    [LoggerMessage(EventId = 7, Level = LogLevel.Warning, Message = "{Warning}")]
    public static partial void Warning(ILogger logger, string warning);

    /// <summary>An event of the runtime or a service, at its own level.</summary>
    [LoggerMessage(EventId = 8, Message = "{Event}")]
    public static partial void RuntimeEvent(ILogger logger, LogLevel level, string @event);
}

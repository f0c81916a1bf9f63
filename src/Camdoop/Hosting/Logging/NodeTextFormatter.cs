using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Topology;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Logging.Console;

namespace Camdoop.Hosting.Logging;

/// <summary>
/// The node log's text line, as it was before the node logged through Microsoft.Extensions.Logging (see
/// <see cref="NodeLog.FormatLine"/>): the library's "simple" formatter writes two lines an event, or local time and
/// no server on one, and operators and tests read this shape.
/// </summary>
internal sealed class NodeTextFormatter() : ConsoleFormatter(FormatterName)
{
    public const string FormatterName = "camdoop-text";

    public override void Write<TState>(in LogEntry<TState> logEntry, IExternalScopeProvider? scopeProvider, TextWriter textWriter)
    {
        string message = logEntry.Formatter is { } format ? format(logEntry.State, logEntry.Exception) : logEntry.State?.ToString() ?? "";
        if (logEntry.Exception is { } exception)
        {
            message = $"{message}{Environment.NewLine}{exception}";
        }
        Coordinate? server = null;
        scopeProvider?.ForEachScope((scope, _) => server ??= (scope as ServerScope)?.Server, 0);
        textWriter.WriteLine(NodeLog.FormatLine(DateTime.UtcNow, NodeLogLevels.FromMicrosoft(logEntry.LogLevel), server, message));
    }
}

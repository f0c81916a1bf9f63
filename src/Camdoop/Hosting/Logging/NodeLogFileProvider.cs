using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Logging.Console;

namespace Camdoop.Hosting.Logging;

/// <summary>
/// Writes a node's events to its log file (or stderr) with one of the library's <see cref="ConsoleFormatter"/>s.
/// Microsoft.Extensions.Logging has no file provider, and its console provider writes from a background queue,
/// which a crash would cut short: here every event is formatted and written under a lock and flushed before the
/// call returns, so a crash loses nothing already logged. Events are rare (links up/down, errors), never per frame.
/// </summary>
internal sealed class NodeLogFileProvider : ILoggerProvider, ISupportExternalScope
{
    private readonly TextWriter _writer;
    private readonly bool _ownsWriter;
    private readonly ConsoleFormatter _formatter;
    private readonly ServerScope _server;
    private readonly Lock _lock = new();
    // One event formatted here first so that it reaches the writer in one write, never half a line.
    private readonly StringWriter _line = new();
    private IExternalScopeProvider _scopes = new LoggerExternalScopeProvider();
    private bool _disposed;

    public NodeLogFileProvider(TextWriter writer, bool ownsWriter, ConsoleFormatter formatter, ServerScope server)
    {
        _writer = writer;
        _ownsWriter = ownsWriter;
        _formatter = formatter;
        _server = server;
    }

    public ILogger CreateLogger(string categoryName) => new FileLogger(this, categoryName);

    public void SetScopeProvider(IExternalScopeProvider scopeProvider) => _scopes = scopeProvider;

    public void Dispose()
    {
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }
            _disposed = true;
            _writer.Flush();
            if (_ownsWriter)
            {
                _writer.Dispose();
            }
        }
    }

    private void Write<TState>(in LogEntry<TState> entry)
    {
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }
            _formatter.Write(entry, new WithServer(_server, _scopes), _line);
            var text = _line.GetStringBuilder();
            if (text.Length == 0)
            {
                return;
            }
            _writer.Write(text);
            _writer.Flush();
            text.Clear();
        }
    }

    /// <summary>The scopes of the call, after the server's: every event names the server, whichever thread logs it.</summary>
    private sealed class WithServer(ServerScope server, IExternalScopeProvider scopes) : IExternalScopeProvider
    {
        public void ForEachScope<TState>(Action<object?, TState> callback, TState state)
        {
            callback(server, state);
            scopes.ForEachScope(callback, state);
        }

        public IDisposable Push(object? state) => scopes.Push(state);
    }

    private sealed class FileLogger(NodeLogFileProvider provider, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => provider._scopes.Push(state);

        // The factory filters by level before it calls a provider's logger.
        public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel))
            {
                provider.Write(new LogEntry<TState>(logLevel, category, eventId, state, exception, formatter));
            }
        }
    }
}

using System.Collections.Concurrent;
using System.Text.Encodings.Web;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Topology;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Console;
using RuntimeLogLevel = Camdoop.Runtime.Logging.LogLevel;

namespace Camdoop.Hosting.Logging;

/// <summary>
/// A node process's log, on Microsoft.Extensions.Logging: an <see cref="ILoggerFactory"/> whose loggers (one category
/// per component: Camdoop.Node, Camdoop.FrontEnd, Camdoop.Web, and the runtime's <see cref="NodeLogCategories"/>)
/// write to the node's log file through <see cref="NodeLogFileProvider"/>, in the config's format, every event
/// naming the server. <see cref="Runtime"/> is the same log as the event loop's <see cref="INodeLog"/>.
/// </summary>
public sealed class NodeLogging : IDisposable
{
    /// <summary>The log file that means stderr (where systemd's journal reads it).</summary>
    public const string StandardError = "-";

    private readonly ServiceProvider _services;

    private NodeLogging(ServiceProvider services)
    {
        _services = services;
        Factory = services.GetRequiredService<ILoggerFactory>();
        Runtime = new RuntimeLog(Factory);
    }

    public ILoggerFactory Factory { get; }

    /// <summary>The log as the runtime's event loop writes it: services, links, loop faults.</summary>
    public INodeLog Runtime { get; }

    public ILogger CreateLogger(string category) => Factory.CreateLogger(category);

    /// <summary>
    /// Appends to <paramref name="logFile"/> (its directory made if missing), or writes to stderr when it is
    /// <see cref="StandardError"/>.
    /// </summary>
    public static NodeLogging Open(string logFile, Coordinate server, RuntimeLogLevel minLevel, NodeLogFormat format)
    {
        ArgumentNullException.ThrowIfNull(logFile);
        if (logFile == StandardError)
        {
            return ToWriter(Console.Error, server, minLevel, format, ownsWriter: false);
        }
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(logFile))!);
        var stream = new FileStream(logFile, FileMode.Append, FileAccess.Write, FileShare.Read);
        return ToWriter(new StreamWriter(stream), server, minLevel, format, ownsWriter: true);
    }

    /// <summary>Writes to <paramref name="writer"/>, flushing it after every event.</summary>
    public static NodeLogging ToWriter(TextWriter writer, Coordinate server, RuntimeLogLevel minLevel, NodeLogFormat format, bool ownsWriter = false)
    {
        ArgumentNullException.ThrowIfNull(writer);
        var services = new ServiceCollection();
        services.AddLogging(builder =>
        {
            builder.SetMinimumLevel(NodeLogLevels.ToMicrosoft(minLevel));
            // For the library's formatters ("simple", "json", "systemd"), which come with its console provider...
            builder.AddConsole();
            builder.AddConsoleFormatter<NodeTextFormatter, ConsoleFormatterOptions>();
            builder.Services.Configure<JsonConsoleFormatterOptions>(options =>
            {
                options.IncludeScopes = true;
                options.UseUtcTimestamp = true;
                options.TimestampFormat = "yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'";
                // "+X", not "\u002BX": the line is read by people as well as shippers, and is never HTML.
                options.JsonWriterOptions = new() { Indented = false, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };
            });
            // ...but not the console provider itself: ours writes to the log file and flushes every event.
            builder.Services.RemoveAll<ILoggerProvider>();
            var scope = new ServerScope(server);
            builder.Services.AddSingleton<ILoggerProvider>(provider =>
                new NodeLogFileProvider(writer, ownsWriter, Formatter(provider, format), scope));
        });
        return new NodeLogging(services.BuildServiceProvider());
    }

    /// <summary>Flushes and closes the log file (after the last event: later events are dropped).</summary>
    public void Dispose() => _services.Dispose();

    private static ConsoleFormatter Formatter(IServiceProvider provider, NodeLogFormat format)
    {
        string name = format switch
        {
            NodeLogFormat.Json => ConsoleFormatterNames.Json,
            _ => NodeTextFormatter.FormatterName,
        };
        return provider.GetServices<ConsoleFormatter>().Single(f => f.Name == name);
    }

    /// <summary>The runtime's events, each under its category's logger.</summary>
    private sealed class RuntimeLog(ILoggerFactory factory) : INodeLog
    {
        private readonly ConcurrentDictionary<string, ILogger> _loggers = new();

        /// <summary>
        /// <paramref name="node"/> is not written: a node process runs one server, which every event names already.
        /// </summary>
        public void Write(string category, Coordinate? node, RuntimeLogLevel level, string message) =>
            NodeLogMessages.RuntimeEvent(_loggers.GetOrAdd(category, factory.CreateLogger), NodeLogLevels.ToMicrosoft(level), message);

        /// <summary>Nothing to do: every event is flushed as it is written.</summary>
        public void Flush()
        {
        }
    }
}

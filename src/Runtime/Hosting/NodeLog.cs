using System.Globalization;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Hosting;

/// <summary>
/// A thread-safe, timestamped log on a writer: one line per message, UTC wall-clock time, level, node (the format of
/// <see cref="FormatLine"/>, which a node's text log file uses too). The link probe and tests log here; a node process
/// logs through Microsoft.Extensions.Logging. Logging is for events (links up/down, errors), never per frame.
/// </summary>
public sealed class NodeLog : INodeLog, IDisposable
{
    private readonly TextWriter _writer;
    private readonly bool _ownsWriter;
    private readonly Lock _lock = new();

    public NodeLog(TextWriter writer, LogLevel minLevel = LogLevel.Info, bool ownsWriter = false)
    {
        ArgumentNullException.ThrowIfNull(writer);
        _writer = writer;
        _ownsWriter = ownsWriter;
        MinLevel = minLevel;
    }

    /// <summary>A sink that drops everything.</summary>
    public static NodeLog Null => new(TextWriter.Null, LogLevel.Error);

    public LogLevel MinLevel { get; set; }

    /// <summary>Appends to <paramref name="path"/>, flushing every line so a crash loses nothing.</summary>
    public static NodeLog ToFile(string path, LogLevel minLevel = LogLevel.Info)
    {
        var stream = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.Read);
        return new NodeLog(new StreamWriter(stream) { AutoFlush = true }, minLevel, ownsWriter: true);
    }

    /// <summary>The category is not written: the text line is the same whichever part of the server logged it.</summary>
    public void Write(string category, Coordinate? node, LogLevel level, string message) => Write(node, level, message);

    public void Write(Coordinate? node, LogLevel level, string message)
    {
        if (level < MinLevel)
        {
            return;
        }
        var line = FormatLine(DateTime.UtcNow, level, node, message);
        lock (_lock)
        {
            _writer.WriteLine(line);
        }
    }

    /// <summary>
    /// A text log line: UTC time to the microsecond, a five-character level, the node as (x,y,z) when known, the
    /// message. Readers of the node log (operators, tests) rely on this shape.
    /// </summary>
    public static string FormatLine(DateTime utc, LogLevel level, Coordinate? node, string message)
    {
        var time = utc.ToString("yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'", CultureInfo.InvariantCulture);
        return node is { } n
            ? $"{time} {Label(level)} ({n.X},{n.Y},{n.Z}) {message}"
            : $"{time} {Label(level)} {message}";
    }

    public void Flush()
    {
        lock (_lock)
        {
            _writer.Flush();
        }
    }

    public void Dispose()
    {
        lock (_lock)
        {
            _writer.Flush();
            if (_ownsWriter)
            {
                _writer.Dispose();
            }
        }
    }

    private static string Label(LogLevel level) => level switch
    {
        LogLevel.Debug => "DEBUG",
        LogLevel.Info => "INFO ",
        LogLevel.Warning => "WARN ",
        _ => "ERROR",
    };
}

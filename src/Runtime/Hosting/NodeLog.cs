using System.Globalization;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Hosting;

/// <summary>
/// A thread-safe, timestamped log sink for a real server: one line per message, UTC wall-clock time, level, node.
/// Logging is for events (links up/down, errors), never per frame.
/// </summary>
public sealed class NodeLog : IDisposable
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

    public void Write(Coordinate? node, LogLevel level, string message)
    {
        if (level < MinLevel)
        {
            return;
        }
        var now = DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'", CultureInfo.InvariantCulture);
        var line = node is { } n
            ? $"{now} {Label(level)} ({n.X},{n.Y},{n.Z}) {message}"
            : $"{now} {Label(level)} {message}";
        lock (_lock)
        {
            _writer.WriteLine(line);
        }
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

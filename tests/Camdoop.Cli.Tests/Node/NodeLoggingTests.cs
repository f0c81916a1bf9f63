using System.Text.Json;
using Camdoop.Hosting.Logging;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Topology;
using Microsoft.Extensions.Logging;
using RuntimeLogLevel = Camdoop.Runtime.Logging.LogLevel;

namespace Camdoop.Cli.Tests.Node;

/// <summary>The node log: <see cref="NodeLogging"/>'s formats, level filter and log file.</summary>
public sealed class NodeLoggingTests : IDisposable
{
    private static readonly Coordinate Server = new(1, 2, 0);
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-node-log-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void JsonWritesOneObjectALineWithTheFieldsAndTheServer()
    {
        var writer = new StringWriter();
        using (var log = NodeLogging.ToWriter(writer, Server, RuntimeLogLevel.Info, NodeLogFormat.Json))
        {
            NodeLogMessages.FrontEndListening(log.CreateLogger("Camdoop.FrontEnd"), "10.0.0.5:7070", "/etc/camdoop/certs", "node '1,2,0'");
            log.Runtime.Write(NodeLogCategories.Links, Server, RuntimeLogLevel.Warning, "link +X eth1: \"quoted\" and {braces}");
        }

        var lines = writer.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(2, lines.Length);
        var events = lines.Select(line => JsonDocument.Parse(line).RootElement).ToList();
        foreach (var e in events)
        {
            Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$", e.GetProperty("Timestamp").GetString());
            Assert.Equal("1,2,0", ServerOf(e));
        }
        var frontEnd = events[0];
        Assert.Equal("Information", frontEnd.GetProperty("LogLevel").GetString());
        Assert.Equal("Camdoop.FrontEnd", frontEnd.GetProperty("Category").GetString());
        Assert.Equal("front-end listening on 10.0.0.5:7070 (mutual TLS 1.3 under the cluster CA in /etc/camdoop/certs, as node '1,2,0')", frontEnd.GetProperty("Message").GetString());
        Assert.Equal("10.0.0.5:7070", frontEnd.GetProperty("State").GetProperty("EndPoint").GetString());
        var link = events[1];
        Assert.Equal("Warning", link.GetProperty("LogLevel").GetString());
        Assert.Equal(NodeLogCategories.Links, link.GetProperty("Category").GetString());
        Assert.Equal("link +X eth1: \"quoted\" and {braces}", link.GetProperty("Message").GetString());
        Assert.Contains("\"link +X eth1:", lines[1], StringComparison.Ordinal); // written for people too: "+", not "\u002B"
    }

    [Fact]
    public void TextKeepsTheLineOfTimeLevelServerAndMessage()
    {
        var writer = new StringWriter();
        using (var log = NodeLogging.ToWriter(writer, Server, RuntimeLogLevel.Debug, NodeLogFormat.Text))
        {
            NodeLogMessages.Stopped(log.CreateLogger("Camdoop.Node"));
            log.Runtime.Write(NodeLogCategories.Services, Server, RuntimeLogLevel.Debug, "a {debug} line");
            log.Runtime.Write(NodeLogCategories.EventLoop, Server, RuntimeLogLevel.Error, "event loop: boom");
        }

        var lines = writer.ToString().Split(Environment.NewLine, StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(3, lines.Length);
        Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z INFO  \(1,2,0\) stopped$", lines[0]);
        Assert.Matches(@"^\S+Z DEBUG \(1,2,0\) a \{debug\} line$", lines[1]);
        Assert.Matches(@"^\S+Z ERROR \(1,2,0\) event loop: boom$", lines[2]);
    }

    [Theory]
    [InlineData(NodeLogFormat.Text)]
    [InlineData(NodeLogFormat.Json)]
    public void LinesBelowTheLevelAreDropped(NodeLogFormat format)
    {
        var writer = new StringWriter();
        using (var log = NodeLogging.ToWriter(writer, Server, RuntimeLogLevel.Warning, format))
        {
            var node = log.CreateLogger("Camdoop.Node");
            NodeLogMessages.Stopped(node); // info
            log.Runtime.Write(NodeLogCategories.Services, Server, RuntimeLogLevel.Debug, "debug line");
            log.Runtime.Write(NodeLogCategories.Services, Server, RuntimeLogLevel.Info, "info line");
            log.Runtime.Write(NodeLogCategories.Services, Server, RuntimeLogLevel.Warning, "warning line");
            NodeLogMessages.StatusSnapshotLate(node, 5);
            Assert.False(node.IsEnabled(LogLevel.Information));
        }

        var lines = writer.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(2, lines.Length);
        Assert.Contains("warning line", lines[0], StringComparison.Ordinal);
        Assert.Contains("did not answer within 5 s", lines[1], StringComparison.Ordinal);
    }

    [Fact]
    public void TheLogFileIsAppendedToAndEveryLineIsOnDiskBeforeTheCallReturns()
    {
        string path = Path.Combine(_directory, "logs", "node.log");
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllText(path, "an earlier run's line\n");
        using var log = NodeLogging.Open(path, Server, RuntimeLogLevel.Info, NodeLogFormat.Json);

        log.Runtime.Write(NodeLogCategories.Links, Server, RuntimeLogLevel.Info, "link +X eth1: up");
        // Read while the log is open: what a crash right now would leave.
        var lines = ReadShared(path);
        Assert.Equal(2, lines.Length);
        Assert.Equal("an earlier run's line", lines[0]);
        Assert.Equal("link +X eth1: up", JsonDocument.Parse(lines[1]).RootElement.GetProperty("Message").GetString());

        log.Runtime.Write(NodeLogCategories.Links, Server, RuntimeLogLevel.Info, "link +X eth1: down");
        Assert.Equal(3, ReadShared(path).Length);
    }

    [Fact]
    public void TheLogFilesDirectoryIsMadeWhenMissingAndTheFileClosedOnDispose()
    {
        string path = Path.Combine(_directory, "not", "yet", "node.log");
        var log = NodeLogging.Open(path, Server, RuntimeLogLevel.Info, NodeLogFormat.Text);
        NodeLogMessages.Stopped(log.CreateLogger("Camdoop.Node"));
        // Held open (and locked) until disposed.
        Assert.Throws<IOException>(() => new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None).Dispose());
        log.Dispose();

        using (new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None))
        {
        }
        Assert.EndsWith("(1,2,0) stopped", Assert.Single(File.ReadAllLines(path)), StringComparison.Ordinal);
    }

    /// <summary>The server, from the scope every event carries.</summary>
    internal static string? ServerOf(JsonElement e) =>
        e.GetProperty("Scopes").EnumerateArray()
            .Where(s => s.ValueKind == JsonValueKind.Object && s.TryGetProperty("Server", out _))
            .Select(s => s.GetProperty("Server").GetString())
            .SingleOrDefault();

    private static string[] ReadShared(string path)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using var reader = new StreamReader(stream);
        return reader.ReadToEnd().Split('\n', StringSplitOptions.RemoveEmptyEntries);
    }
}

/// <summary>A real node (<see cref="Metrics.OneNode"/>) configured for JSON, and the log file it wrote.</summary>
public sealed class NodeJsonLogFileTests
{
    [Fact]
    public void ARealNodeWritesItsEventsAsJsonLinesNamingTheServer()
    {
        var server = new Coordinate(1, 0, 1);
        using var one = new Metrics.OneNode(server, NodeLogFormat.Json);
        string path = one.Node.Settings.LogFile;
        one.Node.Stop();

        var events = File.ReadAllLines(path).Select(line => JsonDocument.Parse(line).RootElement).ToList();
        Assert.All(events, e => Assert.Equal("1,0,1", NodeLoggingTests.ServerOf(e)));
        Assert.All(events, e => Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$", e.GetProperty("Timestamp").GetString()));
        var starting = Assert.Single(events, e => e.GetProperty("Message").GetString()!.StartsWith("starting: torus 2x2x2", StringComparison.Ordinal));
        Assert.Equal("Camdoop.Node", starting.GetProperty("Category").GetString());
        Assert.Equal("Information", starting.GetProperty("LogLevel").GetString());
        Assert.Equal(Environment.ProcessId, starting.GetProperty("State").GetProperty("Pid").GetInt32());
        var frontEnd = Assert.Single(events, e => e.GetProperty("Category").GetString() == "Camdoop.FrontEnd");
        Assert.Equal(one.FrontEnd, frontEnd.GetProperty("State").GetProperty("EndPoint").GetString());
        Assert.Single(events, e => e.GetProperty("Category").GetString() == "Camdoop.Web");
        var last = events[^1];
        Assert.Equal("stopped", last.GetProperty("Message").GetString());
        Assert.Equal("Camdoop.Node", last.GetProperty("Category").GetString());
    }
}

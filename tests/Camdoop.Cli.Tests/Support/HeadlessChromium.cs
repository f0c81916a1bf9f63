using System.Diagnostics;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json.Nodes;

namespace Camdoop.Cli.Tests.Support;

/// <summary>
/// Debian's Chromium, headless, driven through its DevTools protocol: one page target, reached over a WebSocket
/// (System.Net.WebSockets), commands sent and their results awaited by id; events are skipped. Disposing kills the
/// browser and removes its profile directory.
/// </summary>
public sealed class HeadlessChromium : IDisposable
{
    public const string Executable = "/usr/bin/chromium";

    private readonly Process _process;
    private readonly string _profile;
    private readonly ClientWebSocket _socket = new();
    private int _nextId;

    private HeadlessChromium(Process process, string profile)
    {
        _process = process;
        _profile = profile;
    }

    /// <summary>Why Chromium cannot run here, or null.</summary>
    public static string? WhyUnavailable() =>
        File.Exists(Executable) ? null : $"{Executable} is missing (apt-get install chromium; test.sh installs it when run as root)";

    /// <summary>Starts the browser with a fresh profile and attaches to its first page.</summary>
    public static HeadlessChromium Start(int width = 1280, int height = 1000)
    {
        string profile = Path.Combine(Path.GetTempPath(), $"camdoop-chromium-{Environment.ProcessId}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(profile);
        var psi = new ProcessStartInfo(Executable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        // As root Chromium needs --no-sandbox; the page it loads is the product's own. The web view's certificate is
        // signed by the cluster's CA, which this browser's profile does not hold: certificate errors are ignored.
        foreach (var arg in new[]
        {
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--ignore-certificate-errors",
            "--disable-extensions", "--disable-background-networking", "--disable-dev-shm-usage",
            "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", $"--user-data-dir={profile}",
            $"--window-size={width},{height}", "about:blank",
        })
        {
            psi.ArgumentList.Add(arg);
        }
        var process = Process.Start(psi) ?? throw new InvalidOperationException("cannot start chromium");
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var browser = new HeadlessChromium(process, profile);
        try
        {
            browser.Attach();
        }
        catch
        {
            browser.Dispose();
            throw;
        }
        return browser;
    }

    /// <summary>Loads <paramref name="url"/> (returns once the navigation is committed, not when the page has loaded).</summary>
    public void Navigate(string url) => Send("Page.navigate", new JsonObject { ["url"] = url });

    /// <summary>Evaluates a JavaScript expression in the page and returns its value as JSON (null for undefined).</summary>
    public JsonNode? Evaluate(string expression)
    {
        var result = Send("Runtime.evaluate", new JsonObject { ["expression"] = expression, ["returnByValue"] = true });
        if (result["exceptionDetails"] is { } error)
        {
            throw new InvalidOperationException($"the page threw evaluating {expression}: {error.ToJsonString()}");
        }
        return result["result"]?["value"]?.DeepClone();
    }

    /// <summary>Evaluates <paramref name="expression"/> until <paramref name="accept"/> takes its value; returns that value.</summary>
    public JsonNode? WaitFor(string expression, Func<JsonNode?, bool> accept, TimeSpan timeout, string what)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var value = Evaluate(expression);
            if (accept(value))
            {
                return value;
            }
            if (clock.Elapsed > timeout)
            {
                throw new TimeoutException($"timed out after {timeout.TotalSeconds:0} s waiting for {what}; last value {value?.ToJsonString() ?? "undefined"}");
            }
            Thread.Sleep(200);
        }
    }

    /// <summary>A PNG of the page as the browser renders it.</summary>
    public byte[] Screenshot() => Convert.FromBase64String(Send("Page.captureScreenshot", new JsonObject { ["format"] = "png" })["data"]!.GetValue<string>());

    public void Dispose()
    {
        _socket.Dispose();
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit(5000);
            }
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }
        _process.Dispose();
        try
        {
            Directory.Delete(_profile, recursive: true);
        }
        catch (IOException)
        {
            // A child process still writing its profile: a temporary directory left behind.
        }
    }

    /// <summary>Reads the DevTools port Chromium chose (DevToolsActivePort in its profile) and connects to the page.</summary>
    private void Attach()
    {
        string portFile = Path.Combine(_profile, "DevToolsActivePort");
        var clock = Stopwatch.StartNew();
        string[] lines = [];
        while (lines.Length < 1 || lines[0].Length == 0)
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"chromium exited at start with status {_process.ExitCode}");
            }
            if (clock.Elapsed > TimeSpan.FromSeconds(30))
            {
                throw new TimeoutException("chromium did not open its DevTools port within 30 s");
            }
            Thread.Sleep(100);
            try
            {
                lines = File.Exists(portFile) ? File.ReadAllLines(portFile) : [];
            }
            catch (IOException)
            {
                lines = [];
            }
        }
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        var targets = JsonNode.Parse(http.GetStringAsync($"http://127.0.0.1:{lines[0].Trim()}/json/list").GetAwaiter().GetResult())!.AsArray();
        string ws = targets.First(t => t!["type"]!.GetValue<string>() == "page")!["webSocketDebuggerUrl"]!.GetValue<string>();
        _socket.ConnectAsync(new Uri(ws), CancellationToken.None).GetAwaiter().GetResult();
        Send("Page.enable", new JsonObject());
    }

    private JsonNode Send(string method, JsonObject parameters)
    {
        int id = ++_nextId;
        var message = new JsonObject { ["id"] = id, ["method"] = method, ["params"] = parameters };
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        _socket.SendAsync(Encoding.UTF8.GetBytes(message.ToJsonString()), WebSocketMessageType.Text, true, timeout.Token).GetAwaiter().GetResult();
        var buffer = new byte[64 * 1024];
        while (true)
        {
            using var text = new MemoryStream();
            WebSocketReceiveResult received;
            do
            {
                received = _socket.ReceiveAsync(buffer, timeout.Token).GetAwaiter().GetResult();
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    throw new InvalidOperationException("chromium closed the DevTools connection");
                }
                text.Write(buffer, 0, received.Count);
            }
            while (!received.EndOfMessage);
            var reply = JsonNode.Parse(text.ToArray())!;
            if (reply["id"]?.GetValue<int>() != id)
            {
                continue; // an event, or the reply to nothing we wait for
            }
            if (reply["error"] is { } error)
            {
                throw new InvalidOperationException($"DevTools {method} failed: {error.ToJsonString()}");
            }
            return reply["result"]!;
        }
    }
}

using System.Diagnostics;

namespace Camdoop.Cli.CommandLine;

/// <summary>
/// A one-line progress display on stderr, redrawn at most every 100 ms. When stderr is not a terminal it prints
/// a plain line every few seconds instead, so logs stay readable.
/// </summary>
public sealed class ProgressBar : IDisposable
{
    private readonly string _label;
    private readonly bool _interactive;
    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private long _lastDrawMs = -10_000;
    private int _lastWidth;

    public ProgressBar(string label)
    {
        _label = label;
        _interactive = !Console.IsErrorRedirected;
    }

    /// <summary>Shows <paramref name="fraction"/> (0..1) done and a short status text.</summary>
    public void Report(double fraction, string status = "")
    {
        long now = _clock.ElapsedMilliseconds;
        long interval = _interactive ? 100 : 5000;
        if (now - _lastDrawMs < interval && fraction < 1)
        {
            return;
        }
        _lastDrawMs = now;
        fraction = Math.Clamp(fraction, 0, 1);
        const int width = 28;
        int filled = (int)Math.Round(fraction * width);
        string line = $"{_label} [{new string('#', filled)}{new string('.', width - filled)}] {fraction * 100,5:0.0}% {status}";
        if (_interactive)
        {
            Console.Error.Write('\r' + line.PadRight(_lastWidth));
            _lastWidth = line.Length;
        }
        else
        {
            Console.Error.WriteLine(line);
        }
    }

    public void Dispose()
    {
        if (_interactive && _lastWidth > 0)
        {
            Console.Error.Write('\r' + new string(' ', _lastWidth) + '\r');
        }
    }
}

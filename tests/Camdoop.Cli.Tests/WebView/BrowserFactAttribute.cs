using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.WebView;

/// <summary>A test that drives Debian's Chromium: skipped where it is not installed (test.sh installs it when run as root).</summary>
public sealed class BrowserFactAttribute : FactAttribute
{
    public BrowserFactAttribute()
    {
        Skip = HeadlessChromium.WhyUnavailable();
    }
}

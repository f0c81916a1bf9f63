using System.Collections.Frozen;

namespace Camdoop.FrontEnd.Web;

/// <summary>The page's files, embedded in the assembly (Web/Assets): nothing is fetched from anywhere else.</summary>
public static class WebAssets
{
    private static readonly FrozenDictionary<string, WebViewResponse> Files = new[]
    {
        ("index.html", "text/html; charset=utf-8"),
        ("login.html", "text/html; charset=utf-8"),
        ("app.js", "text/javascript; charset=utf-8"),
        ("login.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    }.ToFrozenDictionary(f => f.Item1, f => new WebViewResponse(200, f.Item2, Load(f.Item1)), StringComparer.Ordinal);

    /// <summary>The file as a 200 response.</summary>
    public static WebViewResponse Get(string name) => Files[name];

    private static byte[] Load(string name)
    {
        using var stream = typeof(WebAssets).Assembly.GetManifestResourceStream($"Camdoop.FrontEnd.Web.Assets.{name}")
            ?? throw new InvalidOperationException($"the web view's {name} is not embedded in the assembly");
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    }
}

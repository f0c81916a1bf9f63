using System.Reflection;
using ScottPlot;
using SkiaSharp;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// The charts' typeface, DejaVu Sans, carried inside this assembly (Fonts/LICENSE): SkiaSharp's Linux build without
/// fontconfig looks for fonts under /usr/share/fonts only, so on a machine without fonts a PNG's text would be blank.
/// </summary>
internal static class ChartFont
{
    public const string Family = "DejaVu Sans";

    /// <summary>What an SVG asks a viewer for: the same face when it has it, then look-alikes, then any sans-serif.</summary>
    public const string SvgFamilies = "'DejaVu Sans', Verdana, 'Bitstream Vera Sans', Arial, Helvetica, sans-serif";

    private static readonly Lazy<bool> Registration = new(() =>
    {
        Fonts.FontResolvers.Insert(0, new EmbeddedResolver());
        return true;
    });

    /// <summary>Makes <see cref="Family"/> resolve to the embedded files, once per process.</summary>
    public static void Register() => _ = Registration.Value;

    private sealed class EmbeddedResolver : IFontResolver
    {
        private readonly SKTypeface _regular = Load("DejaVuSans.ttf");
        private readonly SKTypeface _bold = Load("DejaVuSans-Bold.ttf");

        public SKTypeface? CreateTypeface(string fontName, FontWeight weight, FontSlant slant, FontSpacing spacing) =>
            fontName == Family ? (weight >= FontWeight.SemiBold ? _bold : _regular) : null;

        public SKTypeface? CreateTypeface(string fontName, bool bold, bool italic) =>
            CreateTypeface(fontName, bold ? FontWeight.Bold : FontWeight.Normal, italic ? FontSlant.Italic : FontSlant.Upright, FontSpacing.Normal);

        private static SKTypeface Load(string file)
        {
            using var stream = Assembly.GetExecutingAssembly().GetManifestResourceStream("Camdoop.Experiments.Reports.Fonts." + file)
                ?? throw new InvalidOperationException($"the font {file} is not embedded");
            return SKTypeface.FromStream(stream) ?? throw new InvalidOperationException($"the font {file} does not load");
        }
    }
}

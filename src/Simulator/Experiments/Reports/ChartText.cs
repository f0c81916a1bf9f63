namespace Camdoop.Experiments.Reports;

/// <summary>
/// Fitting text to a chart before the renderer draws it: a title broken into lines and a legend name shortened, by a
/// generous estimate of DejaVu Sans' width, so neither runs off the drawing whatever the sweep names.
/// </summary>
internal static class ChartText
{
    /// <summary>0.62 em a character: wider than the average of mixed text, so a layout on it leaves room.</summary>
    public static double Width(string text, double fontSize) => text.Length * fontSize * 0.62;

    /// <summary>The title broken at spaces into lines that fit <paramref name="width"/> pixels at <paramref name="fontSize"/>.</summary>
    public static string Wrap(string title, double width, double fontSize)
    {
        var lines = new List<string>();
        string line = "";
        foreach (string word in title.Split(' '))
        {
            if (line.Length > 0 && Width(line + " " + word, fontSize) > width)
            {
                lines.Add(line);
                line = "";
            }
            line += (line.Length > 0 ? " " : "") + word;
        }
        lines.Add(line);
        return string.Join('\n', lines);
    }

    /// <summary>A legend name cut to fit <paramref name="width"/> pixels, with an ellipsis when it was cut.</summary>
    public static string Shorten(string name, double width, double fontSize)
    {
        if (Width(name, fontSize) <= width)
        {
            return name;
        }
        int keep = Math.Max(1, (int)(width / Width("x", fontSize)) - 1);
        return name[..Math.Min(keep, name.Length)] + "\u2026";
    }
}

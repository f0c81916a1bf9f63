using System.Text;
using Camdoop.ChunkStore;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// The names a client gives a front-end: dataset names and job texts. Both reach file names, logs and terminals, so
/// both are checked before use and every error names the first problem found; a name quoted back in an error shows
/// control characters escaped and is cut short, so a hostile name cannot rewrite the user's terminal or a log.
/// </summary>
public static class Names
{
    /// <summary>A dataset name's most characters (the chunk store's own bound).</summary>
    public const int MaxDatasetLength = ChunkMeta.MaxNameBytes;

    /// <summary>A job text's most characters: a built-in name with options, or an assembly file and type name.</summary>
    public const int MaxJobLength = 512;

    /// <summary>What is wrong with <paramref name="name"/> as a dataset name, or null when nothing is.</summary>
    public static string? DatasetProblem(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (name.Length == 0)
        {
            return "it is empty";
        }
        if (name.Length > MaxDatasetLength)
        {
            return $"it is {name.Length} characters long, over the limit of {MaxDatasetLength}";
        }
        foreach (char c in name)
        {
            if (c is '/' or '\\')
            {
                return $"it contains a path separator ('{c}')";
            }
            if (!IsPrintableAscii(c))
            {
                return "it contains a control or non-ASCII character";
            }
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('.' or '_' or '-'))
            {
                return $"it contains '{c}' (names use letters, digits, '.', '_' and '-')";
            }
        }
        if (name[0] == '.')
        {
            return "it starts with '.'";
        }
        return name.Contains("..", StringComparison.Ordinal) ? "it contains '..'" : null;
    }

    /// <summary>What is wrong with <paramref name="job"/> as a job text (before the job itself is parsed), or null.</summary>
    public static string? JobProblem(string job)
    {
        ArgumentNullException.ThrowIfNull(job);
        if (job.Length == 0)
        {
            return "it is empty";
        }
        if (job.Length > MaxJobLength)
        {
            return $"it is {job.Length} characters long, over the limit of {MaxJobLength}";
        }
        return job.All(IsPrintableAscii) ? null : "it contains a control or non-ASCII character";
    }

    /// <summary>Throws a <see cref="FrontEndException"/> unless <paramref name="name"/> is a valid dataset name.</summary>
    public static string CheckDataset(string name, string what = "dataset name") =>
        DatasetProblem(name) is { } problem ? throw new FrontEndException($"{Quote(name)} is not a valid {what}: {problem}") : name;

    /// <summary>Throws a <see cref="FrontEndException"/> unless <paramref name="job"/> is a valid job text.</summary>
    public static string CheckJob(string job) =>
        JobProblem(job) is { } problem ? throw new FrontEndException($"{Quote(job)} is not a valid job: {problem}") : job;

    /// <summary>'text' as it can be shown safely: other than printable ASCII escaped (\xNN, \uNNNN), at most 64 characters.</summary>
    public static string Quote(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        const int Shown = 64;
        var quoted = new StringBuilder("'");
        foreach (char c in text.AsSpan(0, Math.Min(text.Length, Shown)))
        {
            quoted.Append(IsPrintableAscii(c) ? c.ToString() : c < 0x100 ? $"\\x{(int)c:x2}" : $"\\u{(int)c:x4}");
        }
        return quoted.Append(text.Length > Shown ? "'..." : "'").ToString();
    }

    private static bool IsPrintableAscii(char c) => c is >= ' ' and <= '~';
}

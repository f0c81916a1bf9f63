namespace Camdoop.MapReduce.Trees;

/// <summary>The names users give tree families on the command line, in job requests and in reports.</summary>
public static class TreeFamilyNames
{
    /// <summary>Every family by name, for option parsers.</summary>
    public static readonly IReadOnlyDictionary<string, TreeFamily> All = new Dictionary<string, TreeFamily>(StringComparer.Ordinal)
    {
        ["shallow"] = TreeFamily.Shallow,
        ["paper"] = TreeFamily.Paper,
    };

    public static string Name(this TreeFamily family) => family switch
    {
        TreeFamily.Shallow => "shallow",
        TreeFamily.Paper => "paper",
        _ => throw new ArgumentOutOfRangeException(nameof(family), family, "unknown tree family"),
    };

    /// <summary>The family named <paramref name="name"/> (case-insensitive); false for anything else.</summary>
    public static bool TryParse(string? name, out TreeFamily family) =>
        All.TryGetValue(name?.ToLowerInvariant() ?? "", out family);
}

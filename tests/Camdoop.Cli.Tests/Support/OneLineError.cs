using System.Text.RegularExpressions;

namespace Camdoop.Cli.Tests.Support;

/// <summary>What every command must do with input it cannot use: exit 1 with one clear line on stderr, no stack trace.</summary>
internal static partial class OneLineError
{
    /// <summary>
    /// Asserts that <paramref name="result"/> failed with exit 1 and exactly one error line on stderr, starting with
    /// "camdoop: " and containing <paramref name="expected"/>; progress-bar lines may come before it, nothing else.
    /// </summary>
    public static void Assert(CliResult result, string expected)
    {
        Xunit.Assert.True(result.ExitCode == 1, result.ToString());
        Xunit.Assert.DoesNotContain("Unhandled exception", result.Stderr, StringComparison.Ordinal);
        Xunit.Assert.DoesNotMatch(StackFrame(), result.Stderr);
        var lines = result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Where(l => !ProgressLine().IsMatch(l)).ToList();
        string line = Xunit.Assert.Single(lines);
        Xunit.Assert.StartsWith("camdoop: ", line, StringComparison.Ordinal);
        Xunit.Assert.Contains(expected, line, StringComparison.Ordinal);
    }

    // "sim run [#######.....]  25.0% map: 7/27 servers mapped", as a progress bar prints when stderr is redirected.
    [GeneratedRegex(@"^[a-z ]+ \[[#.]+\] ")]
    private static partial Regex ProgressLine();

    [GeneratedRegex(@"^\s+at \S+\(", RegexOptions.Multiline)]
    private static partial Regex StackFrame();
}

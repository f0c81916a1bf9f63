using System.Diagnostics;
using Camdoop.Cli.CommandLine;

namespace Camdoop.Cli.Testbed;

/// <summary>Runs system tools (ip, tc) and turns their failures into one clear line.</summary>
public static partial class SystemCommand
{
    /// <summary>Runs <paramref name="file"/> with <paramref name="args"/>, feeding <paramref name="stdin"/>; throws on a non-zero exit.</summary>
    public static string Run(string file, IEnumerable<string> args, string? stdin = null, bool allowFailure = false)
    {
        var psi = new ProcessStartInfo(file)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = stdin is not null,
            UseShellExecute = false,
        };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var p = Process.Start(psi) ?? throw new CliException($"cannot start {file}");
        if (stdin is not null)
        {
            p.StandardInput.Write(stdin);
            p.StandardInput.Close();
        }
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEnd();
        p.WaitForExit();
        if (p.ExitCode != 0 && !allowFailure)
        {
            var first = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).FirstOrDefault() ?? $"exit code {p.ExitCode}";
            throw new CliException($"{file} {string.Join(' ', psi.ArgumentList.Take(4))}...: {first.Trim()}");
        }
        return stdout.Result;
    }

    public static string Ip(params string[] args) => Run("ip", args);

    /// <summary>Runs many ip commands in one process (`ip -batch -`), optionally inside a namespace.</summary>
    public static void IpBatch(string? netns, IEnumerable<string> lines)
    {
        var script = string.Join('\n', lines) + "\n";
        var args = new List<string>();
        if (netns is not null)
        {
            args.AddRange(["-n", netns]);
        }
        args.AddRange(["-batch", "-"]);
        Run("ip", args, script);
    }

    public static void TcBatch(string netns, IEnumerable<string> lines)
    {
        var script = string.Join('\n', lines) + "\n";
        Run("tc", ["-n", netns, "-batch", "-"], script);
    }

    public static bool IsRoot => GetEffectiveUserId() == 0;

    [System.Runtime.InteropServices.LibraryImport("libc", EntryPoint = "geteuid")]
    private static partial uint GetEffectiveUserId();
}

using System.Diagnostics;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Sdk;

/// <summary>Runs the `dotnet` command (pack, new, build) as a user would, in a child process.</summary>
internal static class DotnetCommand
{
    public static CliResult Run(string workingDirectory, IReadOnlyDictionary<string, string> environment, params string[] args)
    {
        // Builds at a lower CPU priority, as simulations: the testbed tests' nodes beside them keep the CPU.
        var psi = LowPriority.StartInfo("dotnet");
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        psi.UseShellExecute = false;
        psi.WorkingDirectory = workingDirectory;
        // `dotnet test` passes its own MSBuild's paths to the test process; a child build must find its own.
        foreach (string name in psi.Environment.Keys.Where(k => k.StartsWith("MSBUILD", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            psi.Environment.Remove(name);
        }
        foreach (var (name, value) in environment)
        {
            psi.Environment[name] = value;
        }
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var process = Process.Start(psi) ?? throw new InvalidOperationException("cannot start dotnet");
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(TimeSpan.FromMinutes(10)))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"dotnet {string.Join(' ', args)} did not finish in 10 minutes");
        }
        return new CliResult(process.ExitCode, stdout.Result, stderr.Result);
    }
}

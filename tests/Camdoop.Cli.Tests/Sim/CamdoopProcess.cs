using System.Diagnostics;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>Runs the built `camdoop` command (camdoop.dll beside the tests) as a real child process.</summary>
internal static class CamdoopProcess
{
    public static (int ExitCode, string Stdout, string Stderr) Run(params string[] args)
    {
        string dll = Path.Combine(AppContext.BaseDirectory, "camdoop.dll");
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add(dll);
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var p = Process.Start(psi)!;
        var stdout = p.StandardOutput.ReadToEndAsync();
        var stderr = p.StandardError.ReadToEndAsync();
        if (!p.WaitForExit(300_000))
        {
            p.Kill(entireProcessTree: true);
            throw new TimeoutException($"camdoop {string.Join(' ', args)} did not finish in 5 minutes");
        }
        return (p.ExitCode, stdout.Result, stderr.Result);
    }
}

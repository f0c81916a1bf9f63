using System.Diagnostics;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>Runs the built `camdoop` command (camdoop.dll beside the tests) as a real child process.</summary>
internal static class CamdoopProcess
{
    public static (int ExitCode, string Stdout, string Stderr) Run(params string[] args) => Start(niced: false, args);

    /// <summary>
    /// <see cref="Run"/> at a lower CPU priority (nice 10): for long simulations, which must not take the CPU from the
    /// testbed tests' node processes running beside them (starved, those miss beacons and are taken for dead).
    /// </summary>
    public static (int ExitCode, string Stdout, string Stderr) RunNiced(params string[] args) => Start(niced: true, args);

    private static (int ExitCode, string Stdout, string Stderr) Start(bool niced, string[] args)
    {
        string dll = Path.Combine(AppContext.BaseDirectory, "camdoop.dll");
        var psi = LowPriority.StartInfo("dotnet", niced);
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        psi.UseShellExecute = false;
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

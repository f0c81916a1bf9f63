using System.Diagnostics;
using System.Text;

namespace Camdoop.Cli.Tests.Support;

/// <summary>The outcome of one `camdoop` run.</summary>
public sealed record CliResult(int ExitCode, string Stdout, string Stderr)
{
    public override string ToString() => $"exit {ExitCode}\nstdout:\n{Stdout}\nstderr:\n{Stderr}";
}

/// <summary>
/// Runs the real `camdoop` command (the apphost built next to this test assembly) in a child process, as a user
/// would, and captures its exit code and output.
/// </summary>
internal static class CliRunner
{
    public static string Executable => Path.Combine(AppContext.BaseDirectory, "camdoop");

    public static CliResult Run(params string[] args) => RunAs(null, TimeSpan.FromMinutes(5), args);

    public static CliResult Run(TimeSpan timeout, params string[] args) => RunAs(null, timeout, args);

    /// <summary>Runs with <paramref name="environment"/> added to (or, for a null value, removed from) this process's environment.</summary>
    public static CliResult RunWith(IReadOnlyDictionary<string, string?> environment, params string[] args) => RunAs(null, TimeSpan.FromMinutes(5), args, environment);

    /// <summary>Runs as another user id (through setpriv) when <paramref name="uid"/> is given.</summary>
    public static CliResult RunAs(int? uid, TimeSpan timeout, params string[] args) => RunAs(uid, timeout, args, null);

    private static CliResult RunAs(int? uid, TimeSpan timeout, string[] args, IReadOnlyDictionary<string, string?>? environment)
    {
        // Simulations run at a lower CPU priority (nice 10), as the simulator tests do: beside them, the testbed tests'
        // node processes must keep the CPU they need, or they miss beacons and are taken for dead.
        var psi = uid is null ? LowPriority.StartInfo(Executable, niced: args.Length > 0 && args[0] is "sim" or "demo") : new ProcessStartInfo("setpriv");
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        psi.UseShellExecute = false;
        psi.WorkingDirectory = Path.GetTempPath();
        foreach (var (name, value) in environment ?? new Dictionary<string, string?>())
        {
            psi.Environment[name] = value;
        }
        if (uid is { } id)
        {
            psi.ArgumentList.Add($"--reuid={id}");
            psi.ArgumentList.Add($"--regid={id}");
            psi.ArgumentList.Add("--clear-groups");
            psi.ArgumentList.Add(Executable);
        }
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var process = Process.Start(psi) ?? throw new InvalidOperationException("cannot start camdoop");
        var stdout = new StringBuilder();
        var stderr = new StringBuilder();
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (stdout)
                {
                    stdout.AppendLine(e.Data);
                }
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                lock (stderr)
                {
                    stderr.AppendLine(e.Data);
                }
            }
        };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        if (!process.WaitForExit(timeout))
        {
            process.Kill(entireProcessTree: true);
            process.WaitForExit();
            throw new TimeoutException($"camdoop {string.Join(' ', args)} did not finish in {timeout.TotalSeconds:0} s; output so far:\n{stdout}\n{stderr}");
        }
        process.WaitForExit();
        lock (stdout)
        {
            lock (stderr)
            {
                return new CliResult(process.ExitCode, stdout.ToString(), stderr.ToString());
            }
        }
    }
}

using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// Linux network namespaces, for tests, probes and the emulated testbed. <see cref="Run{T}"/> enters a namespace on a
/// dedicated thread (setns(2) affects only the calling thread); sockets opened there stay in that namespace after the
/// thread ends, so a node can open its links inside its namespace and use them from any thread.
/// </summary>
public static partial class NetworkNamespace
{
    private const string Directory = "/run/netns";

    /// <summary>Runs <paramref name="action"/> on a fresh thread inside namespace <paramref name="name"/>; rethrows its failure.</summary>
    public static T Run<T>(string name, Func<T> action)
    {
        ArgumentNullException.ThrowIfNull(action);
        T? result = default;
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                using var handle = File.OpenHandle(Path.Combine(Directory, name));
                if (LibC.SetNs((int)handle.DangerousGetHandle(), LibC.CLONE_NEWNET) != 0)
                {
                    throw new RawEthernetException($"cannot enter network namespace {name}: {LibC.Describe(LibC.Errno)}");
                }
                result = action();
            }
            // handed back to the caller's thread
            catch (Exception ex)
            {
                failure = ex;
            }
        })
        {
            IsBackground = true,
            Name = $"netns {name}",
        };
        thread.Start();
        thread.Join();
        if (failure is RawEthernetException)
        {
            throw failure;
        }
        if (failure is not null)
        {
            throw new RawEthernetException($"in network namespace {name}: {failure.Message}", failure);
        }
        return result!;
    }

    public static bool Exists(string name) => File.Exists(Path.Combine(Directory, name));

    public static void Create(string name) => Ip("netns", "add", name);

    /// <summary>Deletes a namespace (its interfaces go with it); a missing namespace is not an error.</summary>
    public static void Delete(string name)
    {
        if (Exists(name))
        {
            Ip("netns", "delete", name);
        }
    }

    /// <summary>Whether this process may create namespaces: root, Linux, and iproute2 answering `ip netns list`.</summary>
    public static string? WhyUnavailable()
    {
        if (!OperatingSystem.IsLinux())
        {
            return "network namespaces need Linux";
        }
        if (!Environment.IsPrivilegedProcess)
        {
            return "network namespaces and raw sockets need root";
        }
        try
        {
            Ip("netns", "list");
            return null;
        }
        // any failure means "not available", reported as text
        catch (Exception ex)
        {
            return $"`ip netns` is not usable: {ex.Message}";
        }
    }

    /// <summary>
    /// Deletes namespaces named <c>{prefix}{pid}-{n}a</c> or <c>b</c> (<see cref="VethLink"/>'s names) whose creating
    /// process has exited (left over by a crash). Only names with that exact shape are touched: a testbed's
    /// <c>{prefix}-{x}-{y}-{z}</c> namespaces, alive in another process, once matched a looser pattern with "pid" 0.
    /// </summary>
    public static void DeleteOrphans(string prefix)
    {
        if (!System.IO.Directory.Exists(Directory))
        {
            return;
        }
        var pattern = new Regex("^" + Regex.Escape(prefix) + @"(\d+)-\d+[ab]$", RegexOptions.CultureInvariant);
        foreach (var path in System.IO.Directory.EnumerateFiles(Directory))
        {
            var name = Path.GetFileName(path);
            var m = pattern.Match(name);
            if (m.Success && int.TryParse(m.Groups[1].Value, NumberStyles.None, CultureInfo.InvariantCulture, out int pid)
                && pid != Environment.ProcessId && !System.IO.Directory.Exists($"/proc/{pid}"))
            {
                Ip("netns", "delete", name);
            }
        }
    }

    /// <summary>Runs iproute2's `ip` with <paramref name="args"/>; throws with its first error line on failure.</summary>
    public static string Ip(params string[] args)
    {
        var psi = new ProcessStartInfo("ip")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        Process? p;
        try
        {
            p = Process.Start(psi);
        }
        catch (System.ComponentModel.Win32Exception ex)
        {
            throw new RawEthernetException($"cannot run `ip` (is iproute2 installed?): {ex.Message}", ex);
        }
        using (p)
        {
            if (p is null)
            {
                throw new RawEthernetException("cannot run `ip`");
            }
            var stdout = p.StandardOutput.ReadToEndAsync();
            var stderr = p.StandardError.ReadToEnd();
            p.WaitForExit();
            if (p.ExitCode != 0)
            {
                var first = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).FirstOrDefault()?.Trim() ?? $"exit code {p.ExitCode}";
                throw new RawEthernetException($"ip {string.Join(' ', args)}: {first}");
            }
            return stdout.Result;
        }
    }
}

using System.Diagnostics;
using Camdoop.Cli.Tests.Support;
using Camdoop.Hosting;

namespace Camdoop.Cli.Tests.Release;

/// <summary>
/// What an operator installs: scripts/release.sh's archive (published self-contained, unpacked and run as it ships),
/// and the systemd unit and example config in deploy/ that it carries.
/// </summary>
public sealed class ReleaseArchiveTests
{
    private static readonly Lazy<string> Root = new(() =>
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Camdoop.sln")))
        {
            directory = directory.Parent;
        }
        return directory?.FullName ?? throw new InvalidOperationException($"no directory above {AppContext.BaseDirectory} holds Camdoop.sln");
    });

    private static string Deploy(string name) => Path.Combine(Root.Value, "deploy", name);

    [Fact]
    public void TheExampleConfigIsValidAndMatchesTheUnitsDirectories()
    {
        var settings = NodeConfig.Load(Deploy("node.example.json")).Validate();
        Assert.Equal(6, settings.Interfaces.Count(i => i is not null));
        string unit = File.ReadAllText(Deploy("camdoop-node.service"));
        // The unit lets the node write to its data and log directories and nowhere else.
        var writable = Setting(unit, "ReadWritePaths").Split(' ');
        Assert.Contains(settings.DataDirectory, writable);
        Assert.Contains(Path.GetDirectoryName(settings.LogFile)!, writable);
        Assert.Equal("/var/lib/camdoop", "/var/lib/" + Setting(unit, "StateDirectory"));
        Assert.Equal("/var/log/camdoop", "/var/log/" + Setting(unit, "LogsDirectory"));
    }

    [Fact]
    public void TheUnitRunsTheNodeAsItsOwnUserWithOnlyTheCapabilitiesItNeeds()
    {
        string unit = File.ReadAllText(Deploy("camdoop-node.service"));
        Assert.Equal("camdoop", Setting(unit, "User"));
        Assert.Equal("/opt/camdoop/current/camdoop node --config /etc/camdoop/node.json", Setting(unit, "ExecStart"));
        Assert.Equal("/opt/camdoop/current/camdoop node --config /etc/camdoop/node.json --check-config", Setting(unit, "ExecStartPre"));
        Assert.Equal("CAP_NET_RAW CAP_NET_ADMIN", Setting(unit, "AmbientCapabilities"));
        Assert.Equal("CAP_NET_RAW CAP_NET_ADMIN", Setting(unit, "CapabilityBoundingSet"));
        Assert.Equal("on-failure", Setting(unit, "Restart"));
        Assert.Equal("yes", Setting(unit, "NoNewPrivileges"));
        Assert.Equal("strict", Setting(unit, "ProtectSystem"));
        Assert.True(int.Parse(Setting(unit, "LimitNOFILE"), System.Globalization.CultureInfo.InvariantCulture) >= 65536);
    }

    [Fact]
    public void TheLinuxX64ArchiveUnpacksToACamdoopThatRuns()
    {
        string output = Directory.CreateTempSubdirectory("camdoop-release-").FullName;
        try
        {
            var build = Run(Path.Combine(Root.Value, "scripts", "release.sh"), TimeSpan.FromMinutes(10), ("CAMDOOP_RELEASE_DIR", output), "linux-x64");
            Assert.True(build.ExitCode == 0, build.Output);
            string archive = Assert.Single(Directory.GetFiles(output, "*.tar.gz"));
            string name = Path.GetFileName(archive)[..^".tar.gz".Length];
            Assert.Matches(@"^camdoop-\d+\.\d+\.\d+-linux-x64$", name);
            Assert.Equal(0, Run("tar", TimeSpan.FromMinutes(2), null, "-xzf", archive, "-C", output).ExitCode);

            string unpacked = Path.Combine(output, name);
            Assert.True(File.Exists(Path.Combine(unpacked, "INSTALL.md")));
            Assert.Equal(File.ReadAllText(Deploy("camdoop-node.service")), File.ReadAllText(Path.Combine(unpacked, "deploy", "camdoop-node.service")));
            Assert.Equal(File.ReadAllText(Deploy("node.example.json")), File.ReadAllText(Path.Combine(unpacked, "deploy", "node.example.json")));
            // Self-contained: the runtime ships inside, so the command runs with no .NET on the path.
            Assert.True(File.Exists(Path.Combine(unpacked, "libcoreclr.so")));
            var help = Run(Path.Combine(unpacked, "camdoop"), TimeSpan.FromMinutes(1), ("PATH", "/usr/bin:/bin"), "--help");
            Assert.True(help.ExitCode == 0, help.Output);
            Assert.Contains("Camdoop: MapReduce with on-path aggregation", help.Output, StringComparison.Ordinal);
            Assert.Contains("node", help.Output, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(output, recursive: true);
        }
    }

    /// <summary>The value of the first "Key=value" line of a systemd unit.</summary>
    private static string Setting(string unit, string key) =>
        unit.Split('\n').Select(l => l.Trim()).FirstOrDefault(l => l.StartsWith(key + "=", StringComparison.Ordinal))?[(key.Length + 1)..]
        ?? throw new Xunit.Sdk.XunitException($"the unit has no {key}=");

    private static (int ExitCode, string Output) Run(string program, TimeSpan timeout, (string Name, string Value)? environment, params string[] args)
    {
        // At a lower CPU priority: publishing compiles for minutes, beside the testbed tests' nodes.
        var psi = LowPriority.StartInfo(program);
        psi.RedirectStandardOutput = true;
        psi.RedirectStandardError = true;
        psi.UseShellExecute = false;
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        if (environment is var (name, value))
        {
            psi.Environment[name] = value;
        }
        // No DOTNET_ROOT: the archive's command must not lean on an installed runtime.
        psi.Environment.Remove("DOTNET_ROOT");
        using var process = Process.Start(psi)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        if (!process.WaitForExit(timeout))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{program} {string.Join(' ', args)} did not finish in {timeout.TotalMinutes:0} minutes");
        }
        return (process.ExitCode, stdout.Result + stderr.Result);
    }
}

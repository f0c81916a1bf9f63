using System.Xml.Linq;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Sdk;

/// <summary>
/// The job SDK as a user meets it: Camdoop.Jobs packed (sdk/Camdoop.Jobs), the camdoop-job template installed into a
/// template hive of its own, a project made from it, built offline against the packed package alone, and its sample
/// job run by `sim run --verify`. Everything lives in one temporary directory, the NuGet package folder included, so
/// neither the user's template hive nor their package cache is touched.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class JobTemplateTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-job-template-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void AProjectFromTheTemplateBuildsOfflineAndItsSampleJobRunsVerified()
    {
        string packages = Path.Combine(_directory, "packages");
        string hive = Path.Combine(_directory, "hive");
        string project = Path.Combine(_directory, "MyJobs");
        // Sources: the packed package only (this file's <clear/> drops the user's), so the build needs no network.
        File.WriteAllText(Path.Combine(_directory, "nuget.config"), "<configuration><packageSources><clear /></packageSources></configuration>");
        var environment = new Dictionary<string, string>
        {
            ["NUGET_PACKAGES"] = Path.Combine(_directory, "nuget-packages"),
        };

        // Packed with the user's package cache, where the solution's build restored the packages Camdoop needs.
        Dotnet(new Dictionary<string, string>(), "pack", Path.Combine(Repository, "sdk", "Camdoop.Jobs", "Camdoop.Jobs.csproj"), "-c", "Release", "-o", packages,
               "-nologo", "-v", "q", "-nodeReuse:false", "-p:UseSharedCompilation=false");
        Dotnet(environment, "new", "install", Path.Combine(Repository, "templates", "camdoop-job"), "--debug:custom-hive", hive);
        Dotnet(environment, "new", "camdoop-job", "-n", "MyJobs", "-o", project, "--package-source", packages, "--debug:custom-hive", hive);
        Assert.Equal(["LineLengthJob.cs", "MyJobs.csproj", "nuget.config", "sample.txt"],
                     Directory.GetFileSystemEntries(project).Select(Path.GetFileName).Order(StringComparer.Ordinal));
        Dotnet(environment, "build", project, "-c", "Release", "-nologo", "-v", "q", "-nodeReuse:false", "-p:UseSharedCompilation=false");
        string bin = Path.Combine(project, "bin", "Release", "net10.0");
        Assert.Empty(Directory.GetFiles(bin, "Camdoop.*")); // the host supplies Camdoop's assemblies

        string output = Path.Combine(_directory, "out");
        var run = CliRunner.Run("sim", "run", "--job", $"{Path.Combine(bin, "MyJobs.dll")}#MyJobs.LineLengthJob",
                                "--input", Path.Combine(project, "sample.txt"), "--verify", "--output", output);
        Assert.True(run.ExitCode == 0, run.ToString());
        Assert.Matches(@"(?m)^input / intermediate / output +68 B / 84 B / 60 B$", run.Stdout);
        Assert.Matches(@"(?m)^verified against reference +yes, identical$", run.Stdout);
        Assert.Equal("0\t1\n5\t2\n10\t2\n12\t1\n19\t1\n", File.ReadAllText(Path.Combine(output, "part-00000")));
    }

    [Fact]
    public void TheTemplateReferencesTheVersionThatIsPacked()
    {
        string packed = Property(Path.Combine(Repository, "Directory.Build.props"), "Version");
        var reference = XDocument.Load(Path.Combine(Repository, "templates", "camdoop-job", "MyJobs.csproj")).Descendants("PackageReference")
            .Single(r => (string?)r.Attribute("Include") == "Camdoop.Jobs");
        Assert.Equal(packed, (string?)reference.Attribute("Version"));
    }

    private void Dotnet(Dictionary<string, string> environment, params string[] args)
    {
        var result = DotnetCommand.Run(_directory, environment, args);
        Assert.True(result.ExitCode == 0, $"dotnet {string.Join(' ', args)}: {result}");
    }

    private static string Property(string file, string name) =>
        XDocument.Load(file).Descendants(name).Select(e => e.Value).Single();

    private static string Repository
    {
        get
        {
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Camdoop.sln")))
            {
                directory = directory.Parent;
            }
            Assert.True(directory is not null, $"no directory above {AppContext.BaseDirectory} holds Camdoop.sln");
            return directory!.FullName;
        }
    }
}

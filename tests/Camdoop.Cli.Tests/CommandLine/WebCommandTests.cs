using System.Security.Cryptography;
using System.Text;
using System.Text.Json.Nodes;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>`camdoop web` without a testbed: the token for a given URL and key, and its errors in one line.</summary>
public sealed class WebCommandTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-web-").FullName;

    [Fact]
    public void ItPrintsTheUrlTheTokenDerivedFromTheKeyAndALoginLink()
    {
        byte[] secret = RandomNumberGenerator.GetBytes(32);
        string keyFile = Path.Combine(_directory, "cluster.key");
        File.WriteAllBytes(keyFile, secret);
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(keyFile, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }
        var result = CliRunner.Run("web", "--url", "http://192.0.2.7:7080/", "--key-file", keyFile, "--json");
        Assert.True(result.ExitCode == 0, result.ToString());
        var json = JsonNode.Parse(result.Stdout)!;
        string token = Convert.ToHexStringLower(HMACSHA256.HashData(secret, Encoding.ASCII.GetBytes("camdoop-web-view-1")));
        Assert.Equal("http://192.0.2.7:7080/", json["url"]!.GetValue<string>());
        Assert.Equal(token, json["token"]!.GetValue<string>());
        Assert.Equal($"http://192.0.2.7:7080/#token={token}", json["link"]!.GetValue<string>());
    }

    [Fact]
    public void BadArgumentsAreOneLine()
    {
        OneLineError.Assert(CliRunner.Run("web", "--prefix", "nowq"), "no testbed 'nowq' is up");
        OneLineError.Assert(CliRunner.Run("web", "--url", "http://192.0.2.7:7080/", "--key-file", Path.Combine(_directory, "missing.key")), "missing.key");
        foreach (var (args, expected) in new[]
        {
            (new[] { "web", "--url", "ftp://192.0.2.7/", "--key-file", "k" }, "--url must be a web view's address like http://10.77.0.1:7080/, not 'ftp://192.0.2.7/'"),
            (new[] { "web", "--url", "http://192.0.2.7:7080/api/state", "--key-file", "k" }, "--url must be a web view's address"),
            (new[] { "web", "--url", "http://192.0.2.7:7080/" }, "give --key-file FILE (or set CAMDOOP_KEY_FILE) with --url"),
        })
        {
            var result = CliRunner.RunWith(new Dictionary<string, string?> { ["CAMDOOP_KEY_FILE"] = null }, args);
            Assert.True(result.ExitCode == 2, result.ToString());
            Assert.Equal("camdoop: web: " + expected, Assert.Single(result.Stderr.Trim().Split('\n'))[..("camdoop: web: " + expected).Length]);
        }
    }

    public void Dispose() => Directory.Delete(_directory, recursive: true);
}

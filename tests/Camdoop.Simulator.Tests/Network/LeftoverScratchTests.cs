using System.Diagnostics;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Network;

public sealed class LeftoverScratchTests
{
    [Fact]
    public void OnlyTheDirectoriesOfProcessesThatAreGoneAreRemoved()
    {
        string root = Path.Combine(Path.GetTempPath(), $"leftover-test-{Guid.NewGuid():N}");
        Directory.CreateDirectory(root);
        try
        {
            int dead = ExitedProcessId();
            int live = Environment.ProcessId;
            string gone = Make(root, $"camdoop-input-{dead}-a", withFile: true);
            string ours = Make(root, $"camdoop-input-{live}-b", withFile: true);
            string unnamed = Make(root, "camdoop-input-notapid-c", withFile: false);
            string other = Make(root, $"camdoop-maps-{dead}-d", withFile: false);

            Assert.Equal(1, LeftoverScratch.Remove(root, "camdoop-input-"));

            Assert.False(Directory.Exists(gone));
            Assert.True(Directory.Exists(ours));
            Assert.True(Directory.Exists(unnamed));
            Assert.True(Directory.Exists(other)); // another prefix: not asked for
            Assert.Equal(1, LeftoverScratch.Remove(root, "camdoop-maps-"));
            Assert.Equal(0, LeftoverScratch.Remove(Path.Combine(root, "missing"), "camdoop-input-"));
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }

    private static string Make(string root, string name, bool withFile)
    {
        string path = Path.Combine(root, name);
        Directory.CreateDirectory(path);
        if (withFile)
        {
            File.WriteAllText(Path.Combine(path, "chunk"), "bytes");
        }
        return path;
    }

    /// <summary>The id of a process that has exited (and, just after, is not reused).</summary>
    private static int ExitedProcessId()
    {
        using var p = Process.Start(new ProcessStartInfo("true") { UseShellExecute = false })!;
        p.WaitForExit();
        return p.Id;
    }
}

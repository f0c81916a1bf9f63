using System.Diagnostics;

namespace Camdoop.Cli.Tests.Support;

/// <summary>
/// Child processes at a lower CPU priority (nice 10) where the system has `nice`: simulations and builds, which must
/// not take the CPU from the testbed tests' node processes running beside them (starved, those miss beacons and are
/// taken for dead).
/// </summary>
internal static class LowPriority
{
    private const string Nice = "/usr/bin/nice";

    /// <summary>A start of <paramref name="program"/>, under nice 10 when <paramref name="niced"/> and `nice` is there; its arguments follow.</summary>
    public static ProcessStartInfo StartInfo(string program, bool niced = true)
    {
        if (!niced || !File.Exists(Nice))
        {
            return new ProcessStartInfo(program);
        }
        var psi = new ProcessStartInfo(Nice);
        psi.ArgumentList.Add("-n");
        psi.ArgumentList.Add("10");
        psi.ArgumentList.Add(program);
        return psi;
    }
}

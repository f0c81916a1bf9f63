using System.Globalization;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// Two network namespaces joined by a veth pair: one emulated cable between two servers, for tests and the link
/// probe. Names are <c>{prefix}{pid}-{n}a</c>/<c>b</c>, so concurrent users never collide and a crashed run's
/// leftovers can be recognised (<see cref="NetworkNamespace.DeleteOrphans"/>). Dispose deletes both namespaces.
/// </summary>
public sealed class VethLink : IDisposable
{
    public const string DefaultPrefix = "cdt-raw-";

    private static int s_counter;

    private VethLink(string namespaceA, string namespaceB)
    {
        NamespaceA = namespaceA;
        NamespaceB = namespaceB;
    }

    public string NamespaceA { get; }

    public string NamespaceB { get; }

    /// <summary>The interface name on each side (the same name in both namespaces).</summary>
    public string InterfaceA => "cdt0";

    public string InterfaceB => "cdt0";

    /// <summary>Creates both namespaces and the veth pair with <paramref name="mtu"/>, both ends up.</summary>
    public static VethLink Create(int mtu = 9000, string prefix = DefaultPrefix)
    {
        NetworkNamespace.DeleteOrphans(prefix);
        int n = Interlocked.Increment(ref s_counter);
        string stem = string.Create(CultureInfo.InvariantCulture, $"{prefix}{Environment.ProcessId}-{n}");
        var link = new VethLink(stem + "a", stem + "b");
        try
        {
            NetworkNamespace.Create(link.NamespaceA);
            NetworkNamespace.Create(link.NamespaceB);
            link.CreatePair(mtu);
            return link;
        }
        catch
        {
            link.Dispose();
            throw;
        }
    }

    /// <summary>Creates the veth pair (again, after <see cref="DeletePair"/>) and brings both ends up.</summary>
    public void CreatePair(int mtu = 9000)
    {
        string m = mtu.ToString(CultureInfo.InvariantCulture);
        NetworkNamespace.Ip("link", "add", InterfaceA, "netns", NamespaceA, "mtu", m, "type", "veth",
            "peer", "name", InterfaceB, "netns", NamespaceB, "mtu", m);
        NetworkNamespace.Ip("-n", NamespaceA, "link", "set", InterfaceA, "up");
        NetworkNamespace.Ip("-n", NamespaceB, "link", "set", InterfaceB, "up");
    }

    /// <summary>
    /// Limits one side's transmit rate with a token-bucket filter (as the emulated testbed shapes its links). The
    /// queue holds <paramref name="queueMilliseconds"/> of traffic, far more than a link's send buffer, so a sender
    /// is pushed back by its socket before the queue would drop.
    /// </summary>
    public void Shape(bool sideA, double megabitsPerSecond, int queueMilliseconds = 400)
    {
        var c = CultureInfo.InvariantCulture;
        RunTool("tc", "-n", sideA ? NamespaceA : NamespaceB, "qdisc", "replace", "dev", sideA ? InterfaceA : InterfaceB, "root", "tbf",
            "rate", megabitsPerSecond.ToString(c) + "mbit", "burst", "64kb", "latency", queueMilliseconds.ToString(c) + "ms");
    }

    /// <summary>Deletes the veth pair (both ends), as if the cable and both ports vanished; the namespaces stay.</summary>
    public void DeletePair() => NetworkNamespace.Ip("-n", NamespaceA, "link", "delete", InterfaceA);

    /// <summary>Deletes namespace B: its end of the cable is destroyed, and with it A's end (carrier lost for good).</summary>
    public void DeleteNamespaceB() => NetworkNamespace.Delete(NamespaceB);

    /// <summary>Sets one side's interface administratively up or down (the other side loses carrier).</summary>
    public void SetUp(bool sideA, bool up) =>
        NetworkNamespace.Ip("-n", sideA ? NamespaceA : NamespaceB, "link", "set", sideA ? InterfaceA : InterfaceB, up ? "up" : "down");

    private static void RunTool(string file, params string[] args)
    {
        var psi = new System.Diagnostics.ProcessStartInfo(file) { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
        foreach (var a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var p = System.Diagnostics.Process.Start(psi) ?? throw new RawEthernetException($"cannot run {file}");
        p.StandardOutput.ReadToEnd();
        var error = p.StandardError.ReadToEnd();
        p.WaitForExit();
        if (p.ExitCode != 0)
        {
            throw new RawEthernetException($"{file} {string.Join(' ', args)}: {error.Trim()}");
        }
    }

    public void Dispose()
    {
        Exception? first = null;
        foreach (var ns in new[] { NamespaceA, NamespaceB })
        {
            try
            {
                NetworkNamespace.Delete(ns);
            }
            catch (RawEthernetException ex)
            {
                first ??= ex;
            }
        }
        if (first is not null)
        {
            throw first;
        }
    }
}

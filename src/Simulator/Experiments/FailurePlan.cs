using System.Globalization;
using Camdoop.JobControl;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// A failure to inject into a simulated job, as a user writes it: <c>WHAT@WHEN</c>. WHAT is <c>root</c> (the server of
/// reduce task 0), <c>root-neighbour</c> (a one-hop neighbour of it), <c>random</c> (a server that is neither),
/// <c>coordinator</c> (the server the job is submitted to, which coordinates it), a server <c>X,Y,Z</c>, a cable <c>link:X,Y,Z:PORT</c> (both directions; PORT is +X, -X, +Y, -Y, +Z or -Z), or, on a
/// NetAgg network in mode tcp, an agg box as the report names it (<c>box@rack3</c>, <c>box@core</c>). WHEN is
/// a fraction of T with the suffix T (<c>0.25T</c>: T is the failure-free shuffle-and-reduce time of the same job) or
/// a simulated time after the shuffle starts (<c>15ms</c>, <c>200us</c>, <c>1.5s</c>), or <c>start</c>: down before the
/// job starts, so that it starts without that server (<see cref="StartLead"/> earlier, long enough to be detected), or
/// <c>map</c>: while the servers map, halfway between the job's submission and the shuffle's start.
/// </summary>
public sealed record FailureRequest(string What, double? FractionOfT, long? AtNanoseconds, bool DuringMap = false)
{
    /// <summary>Parses <c>WHAT@WHEN</c>; <see cref="FormatException"/> with a one-line reason when it is not one.</summary>
    public static FailureRequest Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        int at = text.LastIndexOf('@');
        if (at <= 0 || at == text.Length - 1)
        {
            throw new FormatException($"'{text}' is not WHAT@WHEN (e.g. root@0.5T, random@15ms, coordinator@map, link:1,0,2:+X@0.25T)");
        }
        string what = text[..at].Trim().ToLowerInvariant();
        string when = text[(at + 1)..].Trim();
        if (what is not ("root" or "root-neighbour" or "random" or "coordinator") && !TryServer(what, out _) && !TryLink(what, out _, out _) && !IsBoxName(what))
        {
            throw new FormatException($"'{text[..at]}' is not a failure target: root, root-neighbour, random, coordinator, X,Y,Z, link:X,Y,Z:PORT or box@NAME");
        }
        if (when.Equals("start", StringComparison.OrdinalIgnoreCase))
        {
            return new FailureRequest(what, null, -StartLead);
        }
        if (when.Equals("map", StringComparison.OrdinalIgnoreCase))
        {
            return new FailureRequest(what, null, 0, DuringMap: true);
        }
        if (when.EndsWith('T') || when.EndsWith('t'))
        {
            if (!double.TryParse(when[..^1], NumberStyles.Float, CultureInfo.InvariantCulture, out double fraction) || fraction < 0 || fraction > 100)
            {
                throw new FormatException($"'{when}' is not a fraction of T such as 0.25T");
            }
            return new FailureRequest(what, fraction, null);
        }
        if (!SimTime.TryParseDuration(when, out long ns) || ns < 0)
        {
            throw new FormatException($"'{when}' is not a time such as 15ms, 0.5T, map or start");
        }
        return new FailureRequest(what, null, ns);
    }

    /// <summary>How long before the job starts a failure <c>@start</c> happens: several detection times (beacons).</summary>
    public const long StartLead = 250 * SimTime.Millisecond;

    /// <summary>Whether the target is an agg box (<c>box@NAME</c>).</summary>
    public bool IsAggBox => IsBoxName(What);

    /// <summary>Whether the time is a fraction of T, so the failure-free run must come first.</summary>
    public bool NeedsBaseline => FractionOfT is not null;

    /// <summary>
    /// The concrete failure on <paramref name="torus"/> for the job placed by <paramref name="placement"/>:
    /// <c>root-neighbour</c> and <c>random</c> are drawn from <paramref name="seed"/>; a fraction of T needs
    /// <paramref name="baselineNanoseconds"/>.
    /// An agg box needs the NetAgg network's <paramref name="boxes"/>; its host is in the hosts' torus.
    /// </summary>
    public InjectedFailure Resolve(Torus torus, JobPlacement placement, int seed, long? baselineNanoseconds, NetAggLayout? boxes = null)
    {
        ArgumentNullException.ThrowIfNull(torus);
        ArgumentNullException.ThrowIfNull(placement);
        long at = AtNanoseconds ?? (long)Math.Round(FractionOfT!.Value * (baselineNanoseconds
            ?? throw new InvalidOperationException("a failure at a fraction of T needs the failure-free run's time")));
        if (IsAggBox)
        {
            if (boxes is null)
            {
                throw new FormatException($"{What}: agg boxes fail only on a netagg network (--network netagg --mode tcp)");
            }
            int box = boxes.BoxNamed(What["box@".Length..]);
            if (box < 0)
            {
                var names = Enumerable.Range(boxes.Servers, boxes.Boxes).Select(boxes.NameOf);
                throw new FormatException($"{What} is not an agg box of this network: {string.Join(", ", names)}");
            }
            return new InjectedFailure(boxes.NameOf(box), boxes.HostTorus(torus).CoordinateOf(box), null, at, DuringMap);
        }
        var root = placement.Root(0);
        var random = new Random(unchecked((seed * 31) + What.Length));
        switch (What)
        {
            case "root":
                return new InjectedFailure(What, root, null, at, DuringMap);
            case "coordinator":
                // The owner of the job's control key while every server is up: the server a front-end gave the job to.
                return new InjectedFailure(What, KeyMapper.Shared(torus).Primary(JobKeys.ControlKey(placement.JobId)), null, at, DuringMap);
            case "root-neighbour":
                var neighbours = Ports.All.ToArray().Select(p => torus.Neighbour(root, p)).Where(c => c != root).Distinct().ToList();
                return new InjectedFailure(What, neighbours[random.Next(neighbours.Count)], null, at, DuringMap);
            case "random":
                var others = torus.All().Where(c => torus.Distance(c, root) > 1).ToList();
                if (others.Count == 0)
                {
                    throw new InvalidOperationException($"every server of the {torus} torus is the root or a neighbour of it");
                }
                return new InjectedFailure(What, others[random.Next(others.Count)], null, at, DuringMap);
        }
        if (TryServer(What, out var server))
        {
            return torus.Contains(server) ? new InjectedFailure(What, server, null, at, DuringMap)
                : throw new FormatException($"server {What} is not on the {torus} torus");
        }
        TryLink(What, out var end, out var port);
        return torus.Contains(end) ? new InjectedFailure(What, end, port, at, DuringMap)
            : throw new FormatException($"server {end.Name} of '{What}' is not on the {torus} torus");
    }

    private static bool IsBoxName(string text) => text.StartsWith("box@", StringComparison.Ordinal) && text.Length > "box@".Length;

    private static bool TryServer(string text, out Coordinate server) => Coordinate.TryParse(text, out server) && text.Count(c => c == ',') == 2;

    private static bool TryLink(string text, out Coordinate server, out Port port)
    {
        server = default;
        port = default;
        if (!text.StartsWith("link:", StringComparison.Ordinal))
        {
            return false;
        }
        int colon = text.LastIndexOf(':');
        return colon > 5 && TryServer(text[5..colon], out server) && Ports.TryParse(text[(colon + 1)..], out port);
    }
}

/// <summary>
/// A resolved failure: a server crash, or (with <see cref="LinkPort"/>) a cut cable, at a simulated time after the
/// shuffle starts (before the job's submission when negative), or with <see cref="DuringMap"/> while the servers map.
/// </summary>
public sealed record InjectedFailure(string What, Coordinate Server, Port? LinkPort, long AtNanoseconds, bool DuringMap = false)
{
    public bool IsLink => LinkPort is not null;

    /// <summary>An agg box of a NetAgg network (<see cref="What"/> is its name, <see cref="Server"/> its host).</summary>
    public bool IsAggBox => What.StartsWith("box@", StringComparison.Ordinal);

    /// <summary>"x,y,z" or "x,y,z:PORT".</summary>
    public string Target => LinkPort is { } port ? $"{Server.Name}:{port.Name()}" : Server.Name;
}

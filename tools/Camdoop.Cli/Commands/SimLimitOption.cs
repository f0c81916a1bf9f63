using System.Globalization;
using System.Text;
using Camdoop.Cli.CommandLine;
using Camdoop.Monitoring.Control;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `sim run --limit service=NAME|ID,rate=RATE[,port=P][,servers=X,Y,Z;...]` or `--limit job=K,rate=RATE[,...]`:
/// rate limits set on the simulated servers when the job starts, as `camdoop limit` sets them on a cube. K is the
/// job's copy under --concurrent (0 for a single job).
/// </summary>
public static class SimLimitOption
{
    public const string Help = "Rate-limit a service or job, repeatable: service=NAME|ID,rate=RATE or job=K,rate=RATE (K: the copy, 0..; RATE e.g. 200mbit), optionally port=+X and servers=X,Y,Z;X,Y,Z";

    /// <summary>The services a simulated server runs, by name.</summary>
    private static readonly Dictionary<string, byte> Services = new(StringComparer.OrdinalIgnoreCase)
    {
        ["link-monitor"] = WellKnownServices.LinkMonitor,
        ["key-routing"] = WellKnownServices.KeyRouting,
        ["camdoop"] = WellKnownServices.Camdoop,
        ["monitor"] = WellKnownServices.Monitoring,
    };

    public static List<RateLimit> Parse(IEnumerable<string> texts, Torus torus, ulong firstJobId, int copies)
    {
        var limits = new List<RateLimit>();
        foreach (var text in texts)
        {
            limits.Add(ParseOne(text, torus, firstJobId, copies));
        }
        return limits;
    }

    private static RateLimit ParseOne(string text, Torus torus, ulong firstJobId, int copies)
    {
        var fields = Fields(text);
        CliException Bad(string why) => CliException.Usage($"sim run: --limit '{text}': {why}");
        foreach (var key in fields.Keys)
        {
            if (key is not ("service" or "job" or "rate" or "port" or "servers"))
            {
                throw Bad($"unknown field '{key}' (service, job, rate, port, servers)");
            }
        }
        if (!fields.TryGetValue("rate", out var rateText) || !RateText.TryParse(rateText, out long rate))
        {
            throw Bad("give rate=RATE, a number and bit, kbit, mbit or gbit (e.g. 200mbit)");
        }
        int mask = RateLimit.AllPorts;
        if (fields.TryGetValue("port", out var portText))
        {
            mask = 0;
            foreach (var p in portText.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                mask |= Ports.TryParse(p, out var port) ? 1 << (int)port : throw Bad($"'{p}' is not a port (+X, -X, +Y, -Y, +Z, -Z)");
            }
        }
        var servers = new List<Coordinate>();
        if (fields.TryGetValue("servers", out var serverText) && !string.Equals(serverText, "all", StringComparison.OrdinalIgnoreCase))
        {
            foreach (var s in serverText.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                servers.Add(Coordinate.TryParse(s, out var c) && torus.Contains(c) ? c : throw Bad($"'{s}' is not a server of the {torus} torus"));
            }
        }
        bool hasService = fields.TryGetValue("service", out var service);
        bool hasJob = fields.TryGetValue("job", out var job);
        if (hasService == hasJob)
        {
            throw Bad("give service=NAME|ID or job=K");
        }
        if (hasService)
        {
            byte id = Services.TryGetValue(service!, out byte named) ? named
                : byte.TryParse(service, NumberStyles.None, CultureInfo.InvariantCulture, out byte number) && Services.ContainsValue(number) ? number
                : throw Bad($"unknown service '{service}': a simulated server runs {string.Join(", ", Services.Select(s => $"{s.Key} ({s.Value})"))}");
            if (ProtectedServices.Contains(id))
            {
                throw Bad(ProtectedServices.Refusal(Services.First(s => s.Value == id).Key));
            }
            return RateLimit.ForService(id, rate, mask, servers);
        }
        if (!int.TryParse(job, NumberStyles.None, CultureInfo.InvariantCulture, out int k) || k >= copies)
        {
            throw Bad($"job={job}: give the copy's number, 0 to {copies - 1}");
        }
        return RateLimit.ForJob(firstJobId + (ulong)k, rate, mask, servers);
    }

    /// <summary>key=value fields separated by commas; a piece without '=' belongs to the previous value (servers=1,1,1).</summary>
    private static Dictionary<string, string> Fields(string text)
    {
        var fields = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        string? last = null;
        foreach (var piece in text.Split(','))
        {
            int eq = piece.IndexOf('=', StringComparison.Ordinal);
            if (eq < 0)
            {
                if (last is null)
                {
                    throw CliException.Usage($"sim run: --limit '{text}': expected key=value, found '{piece}'");
                }
                fields[last] += "," + piece;
                continue;
            }
            last = piece[..eq].Trim();
            if (!fields.TryAdd(last, piece[(eq + 1)..].Trim()))
            {
                throw CliException.Usage($"sim run: --limit '{text}': '{last}' given twice");
            }
        }
        return fields;
    }

    /// <summary>The limits, one line each, as the report shows them.</summary>
    public static string Describe(IReadOnlyList<RateLimit> limits)
    {
        var text = new StringBuilder();
        foreach (var limit in limits)
        {
            string what = limit.Target == RateLimitTarget.Service
                ? $"service {Services.FirstOrDefault(s => s.Value == limit.ServiceId).Key ?? limit.ServiceId.ToString(CultureInfo.InvariantCulture)}"
                : $"job {limit.JobId:x16}";
            string ports = limit.PortMask == RateLimit.AllPorts ? "every port" : string.Join(" ", limit.PortsCovered.Select(p => p.Name()));
            string servers = limit.Servers.Count == 0 ? "every server" : string.Join(" ", limit.Servers.Select(s => s.Name));
            text.Append(CultureInfo.InvariantCulture, $"Rate limit: {what} at {RateText.Format(limit.BytesPerSecond)} on {ports} of {servers}\n");
        }
        return text.ToString();
    }
}

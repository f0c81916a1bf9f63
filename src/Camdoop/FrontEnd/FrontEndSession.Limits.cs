using System.Globalization;
using Camdoop.FrontEnd.Wire;
using Camdoop.Monitoring.Control;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.FrontEnd;

// "limit" and "limits": rate limits set from a client. The limit travels down this server's monitoring tree; a
// one-round query then reads back what every server applied (docs/monitoring.md, rate limits).
public sealed partial class FrontEndSession
{
    private async Task LimitAsync(LimitRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var monitor = _node.Monitor ?? throw new FrontEndException($"server {_node.Loop.Host.Self} does not run the monitoring service");
        var host = _node.Loop.Host;
        long rate = Field.Required(request.BytesPerSecond, "bytesPerSecond");
        if (rate < 0 || rate > TokenBucket.MaxBytesPerSecond)
        {
            throw new FrontEndException(FormattableString.Invariant($"field 'bytesPerSecond' must be between 0 and {TokenBucket.MaxBytesPerSecond}, not {rate}"));
        }
        int mask = PortMaskOf(request.Ports);
        var servers = ServersOf(request.Servers, host.Torus);
        RateLimit limit;
        string target;
        if (request.Service is not null && request.JobId is not null)
        {
            throw new FrontEndException("give a service or a job id, not both");
        }
        if (request.Service is { } name)
        {
            var service = await _node.OnLoop(() => ServiceNamed(host, name)).ConfigureAwait(false);
            if (ProtectedServices.Contains(service.Id))
            {
                throw new FrontEndException(ProtectedServices.Refusal(service.Name));
            }
            limit = RateLimit.ForService(service.Id, rate, mask, servers);
            target = service.Name;
        }
        else
        {
            ulong jobId = ParseJobId(Field.Required(request.JobId, "jobId"));
            limit = RateLimit.ForJob(jobId, rate, mask, servers);
            target = FormatJobId(jobId);
        }
        await _node.OnLoop(() =>
        {
            monitor.Distribute(limit);
            return true;
        }).ConfigureAwait(false);

        // Asked after the limit left: on every server the query's request arrives after it (same tree, same queues).
        var (confirmed, expected) = limit.Target == RateLimitTarget.Service
            ? await ConfirmServiceLimitAsync(monitor, limit, host.Torus).ConfigureAwait(false)
            : await ConfirmJobLimitAsync(monitor, limit).ConfigureAwait(false);
        await replies.SendAsync(
            new LimitReply
            {
                Kind = limit.Target == RateLimitTarget.Service ? "service" : "job",
                Target = target,
                BytesPerSecond = rate,
                Ports = [.. limit.PortsCovered.Select(p => p.Name())],
                Servers = servers.Count == 0 ? host.Torus.Count : servers.Count,
                Confirmed = confirmed,
                Expected = expected,
            },
            cancellation).ConfigureAwait(false);
    }

    private async Task LimitsAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var monitor = _node.Monitor ?? throw new FrontEndException($"server {_node.Loop.Host.Self} does not run the monitoring service");
        var services = await AskOnceAsync(monitor, "select server, service, port, limit from services where limit > 0 every 1s").ConfigureAwait(false);
        var jobs = await AskOnceAsync(monitor, "select server, job, limit from jobs where limit > 0 every 1s").ConfigureAwait(false);
        var entries = new List<LimitEntry>();
        foreach (var g in services.Rows.GroupBy(r => (Service: r[1].Text!, Rate: (long)r[3].Number)).OrderBy(g => g.Key.Service, StringComparer.Ordinal))
        {
            entries.Add(new LimitEntry
            {
                Kind = "service",
                Target = g.Key.Service,
                BytesPerSecond = g.Key.Rate,
                Servers = g.Select(r => r[0].Text).Distinct().Count(),
                Queues = g.Count(),
            });
        }
        foreach (var g in jobs.Rows.GroupBy(r => (Job: r[1].Text!, Rate: (long)r[2].Number)).OrderBy(g => g.Key.Job, StringComparer.Ordinal))
        {
            entries.Add(new LimitEntry { Kind = "job", Target = g.Key.Job, BytesPerSecond = g.Key.Rate, Servers = g.Count(), Queues = g.Count() });
        }
        await replies.SendAsync(
            new LimitsReply { Limits = entries, Servers = Math.Min(services.Servers, jobs.Servers), ServersInCube = services.ServersInCube },
            cancellation).ConfigureAwait(false);
    }

    private async Task<(long Confirmed, long Expected)> ConfirmServiceLimitAsync(MonitorService monitor, RateLimit limit, Torus torus)
    {
        var round = await AskOnceAsync(monitor, string.Create(CultureInfo.InvariantCulture,
            $"select server, port, limit from services where service_id = {limit.ServiceId} every 1s")).ConfigureAwait(false);
        var ports = limit.PortsCovered.Select(p => p.Name()).ToHashSet(StringComparer.Ordinal);
        var servers = limit.Servers.Select(s => s.Name).ToHashSet(StringComparer.Ordinal);
        long confirmed = round.Rows.Count(r =>
            (servers.Count == 0 || servers.Contains(r[0].Text!)) && ports.Contains(r[1].Text!) && (long)r[2].Number == limit.BytesPerSecond);
        return (confirmed, (servers.Count == 0 ? torus.Count : servers.Count) * (long)ports.Count);
    }

    private async Task<(long Confirmed, long Expected)> ConfirmJobLimitAsync(MonitorService monitor, RateLimit limit)
    {
        var round = await AskOnceAsync(monitor, string.Create(CultureInfo.InvariantCulture,
            $"select server, limit from jobs where job = '{FormatJobId(limit.JobId)}' every 1s")).ConfigureAwait(false);
        var servers = limit.Servers.Select(s => s.Name).ToHashSet(StringComparer.Ordinal);
        var rows = round.Rows.Where(r => servers.Count == 0 || servers.Contains(r[0].Text!)).ToList();
        return (rows.Count(r => (long)r[1].Number == limit.BytesPerSecond), rows.Count);
    }

    /// <summary>
    /// One round of a query asked from this server, asked again (up to three times) while a server misses it: the
    /// first rounds on freshly started servers can be late while they load the monitoring code.
    /// </summary>
    private async Task<QueryRound> AskOnceAsync(MonitorService monitor, string text)
    {
        var query = QueryParser.Parse(text);
        QueryRound round;
        int attempts = 0;
        do
        {
            round = await _node.Start<QueryRound>(done => monitor.Ask(query, done, rounds: 1)).ConfigureAwait(false);
        }
        while (round.Servers < round.ServersInCube && ++attempts < 3);
        return round;
    }

    /// <summary>A service of this server by name or id (the same ids on every server); unknown ones are one clear error.</summary>
    private static IService ServiceNamed(NodeHost host, string name)
    {
        var found = byte.TryParse(name, NumberStyles.None, CultureInfo.InvariantCulture, out byte id)
            ? host.GetService(id)
            : host.Services.FirstOrDefault(s => string.Equals(s.Name, name, StringComparison.OrdinalIgnoreCase));
        return found ?? throw new FrontEndException($"unknown service '{name}': this cube runs {string.Join(", ", host.Services.Select(s => $"{s.Name} ({s.Id})"))}");
    }

    private static int PortMaskOf(List<string>? ports)
    {
        if (ports is null || ports.Count == 0)
        {
            return RateLimit.AllPorts;
        }
        int mask = 0;
        foreach (var text in ports)
        {
            mask |= Ports.TryParse(text, out var port)
                ? 1 << (int)port
                : throw new FrontEndException($"'{text}' is not a port (+X, -X, +Y, -Y, +Z or -Z)");
        }
        return mask;
    }

    private static List<Coordinate> ServersOf(List<string>? servers, Torus torus)
    {
        if (servers is null)
        {
            return [];
        }
        if (servers.Count > RateLimitWire.MaxServers)
        {
            throw new FrontEndException($"a limit names at most {RateLimitWire.MaxServers} servers");
        }
        var list = new List<Coordinate>(servers.Count);
        foreach (var text in servers)
        {
            list.Add(Coordinate.TryParse(text, out var c) && torus.Contains(c)
                ? c
                : throw new FrontEndException($"'{text}' is not a server of the {torus} torus (give x,y,z)"));
        }
        return [.. list.Distinct()];
    }
}

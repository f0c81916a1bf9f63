using System.Globalization;
using Camdoop.Monitoring.Jobs;
using Camdoop.Monitoring.Metrics;
using Camdoop.Monitoring.Storage;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Monitoring.Tables;

/// <summary>
/// Reads a server's tables from its own counters when a query asks (once per round, never per frame): the node's
/// per-port counters, each service queue's counters, the server's MapReduce jobs (<see cref="IJobSource"/>), the
/// process's latest costs, the chunk store's replicas and counters (<see cref="IStorageSource"/>) and every metric
/// series (<see cref="IMetricSource"/>). Rows are in <see cref="TableSchema.Columns"/> order.
/// </summary>
public sealed class NodeTables
{
    private readonly INodeContext _context;
    private readonly IJobSource? _jobs;
    private readonly IServerStatsSource? _stats;
    private readonly IStorageSource? _storage;
    private readonly IMetricSource? _metrics;
    private readonly List<MetricSample> _samples = [];
    private readonly string _self;

    public NodeTables(INodeContext context, IJobSource? jobs, IServerStatsSource? stats, IStorageSource? storage, IMetricSource? metrics = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        _context = context;
        _jobs = jobs;
        _stats = stats;
        _storage = storage;
        _metrics = metrics;
        _self = context.Self.Name;
    }

    public void Read(TableSchema table, List<QueryValue[]> rows)
    {
        ArgumentNullException.ThrowIfNull(table);
        ArgumentNullException.ThrowIfNull(rows);
        if (ReferenceEquals(table, MonitorTables.Links))
        {
            ReadLinks(rows);
        }
        else if (ReferenceEquals(table, MonitorTables.Services))
        {
            ReadServices(rows);
        }
        else if (ReferenceEquals(table, MonitorTables.Jobs))
        {
            ReadJobs(rows);
        }
        else if (ReferenceEquals(table, MonitorTables.Servers))
        {
            ReadServer(rows);
        }
        else if (ReferenceEquals(table, MonitorTables.Storage))
        {
            ReadStorage(rows);
        }
        else if (ReferenceEquals(table, MonitorTables.Metrics))
        {
            ReadMetrics(rows);
        }
        else
        {
            throw new ArgumentException($"'{table.Name}' is not a monitoring table", nameof(table));
        }
    }

    private void ReadLinks(List<QueryValue[]> rows)
    {
        var c = _context.Counters;
        long now = _context.Now;
        foreach (var port in Ports.All)
        {
            int p = (int)port;
            int waiting = 0;
            foreach (var service in _context.Services)
            {
                waiting += _context.QueueCounters(service.Id, port).Waiting;
            }
            rows.Add(
            [
                _self, port.Name(), _context.Torus.Neighbour(_context.Self, port).Name, _context.IsLinkUp(port) ? 1 : 0,
                c.FramesSent[p], c.BytesSent[p], c.FramesReceived[p], c.BytesReceived[p], waiting, c.PortDrops[p],
                c.BacklogAt(port, now),
            ]);
        }
    }

    private void ReadServices(List<QueryValue[]> rows)
    {
        foreach (var service in _context.Services)
        {
            foreach (var port in Ports.All)
            {
                var q = _context.QueueCounters(service.Id, port);
                rows.Add([_self, service.Name, service.Id, port.Name(), q.FramesQueued, q.BytesQueued, q.FramesSent, q.BytesSent, q.Waiting,
                    _context.RateLimit(service.Id, port)]);
            }
        }
    }

    private void ReadJobs(List<QueryValue[]> rows)
    {
        if (_jobs is null)
        {
            return;
        }
        foreach (var job in _jobs.Snapshot())
        {
            rows.Add(
            [
                _self, job.JobId.ToString("x16", CultureInfo.InvariantCulture), job.Name, StateName(job.State),
                job.ReduceTasks, job.Vertices, job.VerticesDone, job.ReduceTasksDone, job.BytesIn, job.BytesOut, job.AggregatedBytes,
                job.Limit, job.FrameBytesSent, job.Output, job.OutputBytes, job.StartedUnixMs, job.EndedUnixMs,
            ]);
        }
    }

    private static string StateName(JobState state) => state switch
    {
        JobState.Running => "running",
        JobState.Finished => "finished",
        JobState.Failed => "failed",
        JobState.Stopped => "stopped",
        _ => throw new ArgumentOutOfRangeException(nameof(state), state, null),
    };

    private void ReadServer(List<QueryValue[]> rows)
    {
        var c = _context.Counters;
        int up = 0;
        foreach (var port in Ports.All)
        {
            up += _context.IsLinkUp(port) ? 1 : 0;
        }
        var stats = _stats?.Latest ?? default;
        int running = 0;
        if (_jobs is not null)
        {
            foreach (var job in _jobs.Snapshot())
            {
                running += job.State == JobState.Running ? 1 : 0;
            }
        }
        rows.Add(
        [
            _self, up, stats.CpuMilliseconds, stats.MemoryBytes, stats.DiskFreeBytes, c.FramesForwarded, c.TotalRejected,
            c.QueueFull, c.ServiceFaults, running,
        ]);
    }

    private void ReadStorage(List<QueryValue[]> rows)
    {
        // Like the jobs table: a server without a chunk store has no row, rather than one of zeros that would
        // count as a server holding nothing.
        if (_storage is null)
        {
            return;
        }
        var s = _storage.Read();
        rows.Add(
        [
            _self, s.Replicas, s.BytesStored, s.CopiesPending, s.ReplicasCopied, s.BytesCopied, s.ReplicasConfirmed,
            s.ReplicasDropped, s.CopiesFailed, s.ServersLost, s.ScrubPasses, s.ScrubbedReplicas, s.ScrubbedBytes,
            s.CorruptFound, s.Repaired, s.Unrepairable, s.Decommissioned, s.Tombstones,
        ]);
    }

    private void ReadMetrics(List<QueryValue[]> rows)
    {
        if (_metrics is null)
        {
            return;
        }
        _samples.Clear();
        _metrics.Read(_samples);
        foreach (var sample in _samples)
        {
            rows.Add([_self, sample.Metric.Name, sample.Label, sample.Value]);
        }
        _samples.Clear();
    }
}

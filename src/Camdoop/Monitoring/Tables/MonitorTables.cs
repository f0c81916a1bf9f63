namespace Camdoop.Monitoring.Tables;

/// <summary>The tables every server exposes to monitoring queries (the HONE paper's host tables, for a CamCube server).</summary>
public static class MonitorTables
{
    private static ColumnSchema Num(string name, string description) => new(name, ColumnKind.Number, description);

    private static ColumnSchema Text(string name, string description) => new(name, ColumnKind.Text, description);

    public static TableSchema Links { get; } = new(
        "links",
        "one port of one server",
        Text("server", "the server, x,y,z"),
        Text("port", "+X, -X, +Y, -Y, +Z or -Z"),
        Text("neighbour", "the server at the other end, x,y,z"),
        Num("up", "1 when the link is up (carrier and the neighbour heard), else 0"),
        Num("frames_sent", "frames the port handed to its link"),
        Num("bytes_sent", "bytes of those frames"),
        Num("frames_received", "valid frames received on the port"),
        Num("bytes_received", "bytes of those frames"),
        Num("queue_depth", "frames waiting in the port's service queues now"),
        Num("drops", "frames dropped at the port: forwarded frames refused (full transit queue, TTL) and frames flushed when the link went down"),
        Num("busy_ns", "nanoseconds during which frames waited for the link (the link was the bottleneck)"));

    public static TableSchema Services { get; } = new(
        "services",
        "one service's queue on one port of one server",
        Text("server", "the server, x,y,z"),
        Text("service", "the service's name (camdoop, chunkstore, routing, ...)"),
        Num("service_id", "the service id of its frames"),
        Text("port", "+X, -X, +Y, -Y, +Z or -Z"),
        Num("frames_queued", "frames the queue admitted: sent by the service or forwarded for it"),
        Num("bytes_queued", "bytes of those frames"),
        Num("frames_sent", "frames the link took from the queue"),
        Num("bytes_sent", "bytes of those frames"),
        Num("waiting", "frames waiting in the queue now"),
        Num("limit", "the service's rate limit on the port, bytes per second; 0 for none"));

    public static TableSchema Jobs { get; } = new(
        "jobs",
        "one MapReduce job on one server",
        Text("server", "the server, x,y,z"),
        Text("job", "the job id, 16 hex digits"),
        Text("name", "the job's name (wordcount, sort, ...)"),
        Text("state", "running, finished, failed or stopped (ended here before it finished: killed, or given up)"),
        Num("reduce_tasks", "reduce tasks of the job"),
        Num("vertices", "the job's tree vertices on this server"),
        Num("vertices_done", "of those, the finished ones"),
        Num("reduce_tasks_done", "reduce tasks this server completed as their root"),
        Num("bytes_in", "shuffle bytes this server's vertices and roots received from their children"),
        Num("bytes_out", "shuffle bytes this server's vertices sent to their parents, acknowledged"),
        Num("aggregated_bytes", "bytes saved by combining equal keys here"),
        Num("limit", "the job's rate limit here, bytes per second on each limited port (the highest, if they differ); 0 for none"),
        Num("frame_bytes_sent", "frame bytes of the job's data frames this server queued on its links"),
        Text("output", "where its output went: the output directory under each server's data directory, or discarded"),
        Num("output_bytes", "bytes of output files this server wrote as a reduce task's root"),
        Num("started_ms", "when the job's shuffle started here, Unix time in milliseconds (the simulator's clock in the simulator)"),
        Num("ended_ms", "when it ended here (finished, failed or stopped), Unix time in milliseconds; 0 while it runs"));

    public static TableSchema Servers { get; } = new(
        "servers",
        "one server",
        Text("server", "the server, x,y,z"),
        Num("links_up", "links that are up"),
        Num("cpu_ms", "CPU time of the server's process (0 in the simulator: one process hosts every server)"),
        Num("memory_bytes", "the process's working set (0 in the simulator)"),
        Num("disk_free_bytes", "free bytes on the data directory's file system (0 in the simulator)"),
        Num("frames_forwarded", "frames forwarded for other servers"),
        Num("frames_rejected", "received frames rejected as malformed"),
        Num("queue_full", "sends refused because a service's queue was full"),
        Num("service_faults", "service callbacks that failed"),
        Num("jobs_running", "MapReduce jobs running here"));

    public static TableSchema Storage { get; } = new(
        "storage",
        "one server's chunk store",
        Text("server", "the server, x,y,z"),
        Num("replicas", "chunk replicas held"),
        Num("bytes_stored", "bytes of those replicas"),
        Num("copies_pending", "replica copies queued or running to restore replicas or move them where they belong"),
        Num("replicas_copied", "replica copies sent"),
        Num("bytes_copied", "bytes of those copies"),
        Num("replicas_confirmed", "copies found unneeded: the target held a good replica"),
        Num("replicas_dropped", "replicas dropped because three good ones are held where they belong"),
        Num("copies_failed", "replica copies that failed (tried again at the next scan)"),
        Num("servers_lost", "servers this one takes for lost now (unreachable past the grace period)"),
        Num("scrub_passes", "full scrub passes over the replicas held"),
        Num("scrubbed_replicas", "replicas the scrubber checked"),
        Num("scrubbed_bytes", "bytes of those replicas"),
        Num("corrupt_found", "replicas the scrubber found corrupt or missing"),
        Num("repaired", "of those, the ones repaired from another replica"),
        Num("unrepairable", "of those, the ones no good replica could repair"),
        Num("decommissioned", "servers this one holds as decommissioned (left out of placement)"),
        Num("tombstones", "tombstones of removed datasets kept here until every server applies them"));

    /// <summary>
    /// Every metric series of every server, as the front-end's /metrics exposes them: ungrouped it is the whole
    /// exposition; grouped by metric (and label) it is the cube's totals, combined on path.
    /// </summary>
    public static TableSchema Metrics { get; } = new(
        "metrics",
        "one series of one server's metrics",
        Text("server", "the server, x,y,z"),
        Text("metric", "the metric's Prometheus name, e.g. camdoop_link_sent_bytes_total (docs/monitoring.md lists them)"),
        Text("label", "the series' port (link metrics) or reason (per-reason counters); empty for a metric with one series"),
        Num("value", "the series' value, in the unit its name says"));

    public static IReadOnlyList<TableSchema> All { get; } = [Links, Services, Jobs, Servers, Storage, Metrics];

    public static TableSchema? Find(string name) =>
        All.FirstOrDefault(t => string.Equals(t.Name, name, StringComparison.OrdinalIgnoreCase));
}

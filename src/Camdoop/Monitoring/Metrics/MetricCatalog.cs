using System.Diagnostics.CodeAnalysis;
using System.Text;

namespace Camdoop.Monitoring.Metrics;

/// <summary>
/// Every metric a server exposes, and which counter of status.json each one is: a group ("node", "chunkStore",
/// ...; "link" for a port's fields, "server" for the top-level ones) and a key. Names follow Prometheus's
/// conventions: camdoop_ and the owner first, the unit spelled out (_bytes, _seconds), _total on counters. A
/// counter family that status.json keeps once per reason ("rejectedBadFlags", ...) is one metric with a reason
/// label. The list's order is the order of the exposition.
/// </summary>
public static class MetricCatalog
{
    private const string Frames = "{frame}";
    private const string Bytes = "By";
    private const string Seconds = "s";
    private const string Count = "1";

    private static readonly Dictionary<(string Group, string Key), MetricDefinition> Counters = [];
    private static readonly List<(string Group, string Prefix, MetricDefinition Metric)> Reasons = [];
    private static readonly List<MetricDefinition> Definitions = [];
    private static readonly Dictionary<string, MetricDefinition> ByName = new(StringComparer.Ordinal);

    static MetricCatalog()
    {
        Server("linksUp", Gauge("camdoop_links_up", Count, "Links of the server that are up: carrier, and the neighbour heard within the liveness deadline"));
        Server("reachableServers", Gauge("camdoop_reachable_servers", Count, "Servers reachable over live links in the server's link-state view, itself included"));

        Link("up", Gauge("camdoop_link_up", Count, "1 when the port's link is up (carrier, and the neighbour heard within the liveness deadline), else 0"));
        Link("carrier", Gauge("camdoop_link_carrier", Count, "1 when the port's interface has carrier, else 0"));
        Link("heard", Gauge("camdoop_link_heard", Count, "1 once a valid frame from the neighbour has arrived on the port, else 0"));
        Link("framesSent", Counter("camdoop_link_frames_sent_total", Frames, "Frames the port handed to its link"));
        Link("bytesSent", Counter("camdoop_link_sent_bytes_total", Bytes, "Bytes of the frames the port handed to its link"));
        Link("framesReceived", Counter("camdoop_link_frames_received_total", Frames, "Valid frames received on the port"));
        Link("bytesReceived", Counter("camdoop_link_received_bytes_total", Bytes, "Bytes of the valid frames received on the port"));
        Link("drops", Counter("camdoop_link_drops_total", Frames, "Frames dropped at the port: forwarded frames refused (full transit queue, expired TTL) and frames flushed when the link went down"));
        Link("busyNs", Counter("camdoop_link_busy_seconds_total", Seconds, "Time during which frames waited for the port's link: the time the link was the bottleneck") with { Divisor = 1e9 });
        Link("kernelDrops", Counter("camdoop_link_kernel_drops_total", Frames, "Frames the kernel dropped because the link's receive buffer was full"));
        Link("sendErrors", Counter("camdoop_link_send_errors_total", Frames, "Frames the link driver failed to send"));

        Add("node", "framesForwarded", Counter("camdoop_node_frames_forwarded_total", Frames, "Frames forwarded for other servers"));
        Add("node", "framesRejected", Counter("camdoop_node_frames_rejected_total", Frames, "Received frames rejected as malformed, for any reason"));
        Reason("node", "rejected", Counter("camdoop_node_frames_rejected_by_reason_total", Frames, "Received frames rejected as malformed, by reason"));
        Add("node", "forwardDropped", Counter("camdoop_node_forward_drops_total", Frames, "Frames in transit dropped: the next queue was full or the TTL ran out"));
        Add("node", "queueFull", Counter("camdoop_node_queue_full_total", Frames, "Sends refused because the service's queue on the port was full"));
        Add("node", "queueFlushed", Counter("camdoop_node_queue_flushed_frames_total", Frames, "Frames dropped because their link went down while they waited in a queue"));
        Add("node", "sentOnDownLink", Counter("camdoop_node_sent_on_down_link_frames_total", Frames, "Frames sent towards a link that was down"));
        Add("node", "serviceFaults", Counter("camdoop_node_service_faults_total", Count, "Service callbacks that failed"));
        Add("node", "loopFaults", Counter("camdoop_node_loop_faults_total", Count, "Exceptions that escaped the node host or a posted action, logged and survived"));
        Add("node", "wiringErrors", Counter("camdoop_node_wiring_errors_total", Count, "Beacons received from a server other than the expected neighbour (a miswired link)"));
        Add("node", "malformedBeacons", Counter("camdoop_node_malformed_beacons_total", Frames, "Frames to the link monitor that are no beacon"));

        Add("process", "cpuMs", Counter("camdoop_process_cpu_seconds_total", Seconds, "CPU time of the server's process") with { Divisor = 1e3 });
        Add("process", "workingSetBytes", Gauge("camdoop_process_working_set_bytes", Bytes, "Working set of the server's process"));
        Add("process", "diskFreeBytes", Gauge("camdoop_process_disk_free_bytes", Bytes, "Free bytes on the file system of the server's data directory"));

        Add("routing", "originated", Counter("camdoop_routing_originated_total", Frames, "Key-routed frames started here"));
        Add("routing", "forwarded", Counter("camdoop_routing_forwarded_total", Frames, "Key-routed frames handed on towards their destination"));
        Add("routing", "delivered", Counter("camdoop_routing_delivered_total", Frames, "Key-routed frames delivered to a service here"));
        Add("routing", "droppedNoRoute", Counter("camdoop_routing_dropped_no_route_total", Frames, "Key-routed frames dropped because no live path led to their destination"));
        Add("routing", "droppedTtl", Counter("camdoop_routing_dropped_ttl_total", Frames, "Key-routed frames dropped because their TTL ran out"));
        Add("routing", "droppedForward", Counter("camdoop_routing_dropped_forward_total", Frames, "Key-routed frames in transit dropped: the next hop's queue was full or its link went down"));
        Add("routing", "malformedControl", Counter("camdoop_routing_malformed_control_total", Count, "Link-state control frames or entries that failed validation"));
        Add("routing", "recomputations", Counter("camdoop_routing_recomputations_total", Count, "Route computations, one per burst of link-state changes"));

        Add("ping", "requestsAnswered", Counter("camdoop_ping_requests_answered_total", Count, "Ping requests answered"));
        Add("ping", "repliesDropped", Counter("camdoop_ping_replies_dropped_total", Count, "Ping replies that could not be sent"));
        Add("ping", "unexpected", Counter("camdoop_ping_unexpected_total", Frames, "Frames to the ping service that were no ping, or replies to nothing outstanding"));

        ChunkStore();
        Shuffle();

        Add("monitor", "rounds", Counter("camdoop_monitor_rounds_total", Count, "Monitoring query rounds the server took part in"));
        Add("monitor", "resultFramesSent", Counter("camdoop_monitor_result_frames_sent_total", Frames, "Query result frames sent to a parent"));
        Add("monitor", "resultBytesSent", Counter("camdoop_monitor_result_sent_bytes_total", Bytes, "Payload bytes of the query results sent to a parent"));
        Add("monitor", "resultBytesReceived", Counter("camdoop_monitor_result_received_bytes_total", Bytes, "Payload bytes of the query results received from children"));
        Add("monitor", "lateResults", Counter("camdoop_monitor_late_results_total", Frames, "Query results that arrived after their round had been sent on"));
        Add("monitor", "incomplete", Counter("camdoop_monitor_incomplete_rounds_total", Count, "Rounds sent on without every child's result"));
        Add("monitor", "malformed", Counter("camdoop_monitor_malformed_total", Frames, "Frames that were no well-formed monitoring message"));
        Add("monitor", "dropped", Counter("camdoop_monitor_dropped_total", Count, "Query results dropped because the link to the parent was down"));
        Add("monitor", "queriesAsked", Gauge("camdoop_monitor_queries_asked", Count, "Queries the server is asking the cube now"));

        Add("jobControl", "coordinated", Gauge("camdoop_job_control_coordinated_jobs", Count, "Jobs the server coordinates now"));
        Add("jobControl", "copiesKept", Gauge("camdoop_job_control_record_copies", Count, "Copies of other coordinators' job records the server keeps"));
        Add("jobControl", "takeovers", Counter("camdoop_job_control_takeovers_total", Count, "Jobs the server took over from a coordinator that died"));
        Add("jobControl", "coordinatorChanges", Counter("camdoop_job_control_coordinator_changes_total", Count, "Times the server's worker turned to a new coordinator"));
        Add("jobControl", "malformed", Counter("camdoop_job_control_malformed_total", Count, "Control frames that did not parse, and messages found malformed"));
        Add("jobControl", "gaveUp", Counter("camdoop_job_control_gave_up_total", Count, "Control messages never acknowledged within the allowed tries"));
        Add("jobControl", "retries", Counter("camdoop_job_control_retries_total", Count, "Control fragments sent again for want of an acknowledgement"));

        Add("streams", "rejected", Counter("camdoop_streams_rejected_total", Count, "Stream connections dropped before they became streams"));
        Add("streams", "unauthenticated", Counter("camdoop_streams_unauthenticated_total", Count, "Stream connections refused for their certificate"));
        Add("streams", "failed", Counter("camdoop_streams_failed_total", Count, "Streams that failed"));

        FrontEnd();
        Web();
    }

    /// <summary>Every metric, in the order of the exposition.</summary>
    public static IReadOnlyList<MetricDefinition> All => Definitions;

    /// <summary>The metric named <paramref name="name"/> (its Prometheus name), or null.</summary>
    public static MetricDefinition? Find(string name) => ByName.GetValueOrDefault(name);

    /// <summary>
    /// The metric that status.json's <paramref name="group"/>.<paramref name="key"/> is, and its label's value (the
    /// reason, snake_case, for a per-reason counter; "" for none); false for a counter no metric covers.
    /// </summary>
    public static bool TryMap(string group, string key, [NotNullWhen(true)] out MetricDefinition? metric, out string label)
    {
        ArgumentNullException.ThrowIfNull(group);
        ArgumentNullException.ThrowIfNull(key);
        label = "";
        if (Counters.TryGetValue((group, key), out metric))
        {
            return true;
        }
        foreach (var (g, prefix, m) in Reasons)
        {
            if (g == group && key.Length > prefix.Length && key.StartsWith(prefix, StringComparison.Ordinal) && char.IsUpper(key[prefix.Length]))
            {
                metric = m;
                label = SnakeCase(key[prefix.Length..]);
                return true;
            }
        }
        metric = null;
        return false;
    }

    /// <summary>"BadCoordinate" as "bad_coordinate".</summary>
    internal static string SnakeCase(string name)
    {
        var text = new StringBuilder(name.Length + 4);
        for (int i = 0; i < name.Length; i++)
        {
            char c = name[i];
            if (char.IsUpper(c) && i > 0)
            {
                text.Append('_');
            }
            text.Append(char.ToLowerInvariant(c));
        }
        return text.ToString();
    }

    private static void ChunkStore()
    {
        const string g = "chunkStore";
        Add(g, "replicasHeld", Gauge("camdoop_chunk_store_replicas", Count, "Chunk replicas held"));
        Add(g, "bytesHeld", Gauge("camdoop_chunk_store_stored_bytes", Bytes, "Bytes of the chunk replicas held"));
        Add(g, "activeOutbound", Gauge("camdoop_chunk_store_active_outbound_transfers", Count, "Chunk transfers this server is sending now"));
        Add(g, "activeInbound", Gauge("camdoop_chunk_store_active_inbound_transfers", Count, "Chunk transfers this server is receiving now"));
        Add(g, "replicasStored", Counter("camdoop_chunk_store_replicas_stored_total", Count, "Replicas written to this server's disk"));
        Add(g, "readsServed", Counter("camdoop_chunk_store_reads_served_total", Count, "Chunk reads served"));
        Add(g, "transfersStarted", Counter("camdoop_chunk_store_transfers_started_total", Count, "Outbound chunk transfers started"));
        Add(g, "transfersSucceeded", Counter("camdoop_chunk_store_transfers_succeeded_total", Count, "Outbound chunk transfers that succeeded"));
        Add(g, "transfersFailed", Counter("camdoop_chunk_store_transfers_failed_total", Count, "Outbound chunk transfers that failed"));
        Add(g, "inboundAccepted", Counter("camdoop_chunk_store_inbound_accepted_total", Count, "Inbound chunk transfers accepted"));
        Add(g, "inboundCompleted", Counter("camdoop_chunk_store_inbound_completed_total", Count, "Inbound chunk transfers completed"));
        Add(g, "dataFramesSent", Counter("camdoop_chunk_store_data_frames_sent_total", Frames, "Chunk data frames sent"));
        Add(g, "dataBytesSent", Counter("camdoop_chunk_store_data_sent_bytes_total", Bytes, "Chunk data bytes sent"));
        Add(g, "dataFramesReceived", Counter("camdoop_chunk_store_data_frames_received_total", Frames, "Chunk data frames received"));
        Add(g, "acksSent", Counter("camdoop_chunk_store_acks_sent_total", Frames, "Chunk transfer acknowledgements sent"));
        Add(g, "duplicateFrames", Counter("camdoop_chunk_store_duplicate_frames_total", Frames, "Chunk data frames received twice"));
        Add(g, "outOfOrderFrames", Counter("camdoop_chunk_store_out_of_order_frames_total", Frames, "Chunk data frames received out of order"));
        Add(g, "timeouts", Counter("camdoop_chunk_store_timeouts_total", Count, "Chunk transfer retransmission timeouts"));
        Add(g, "fastRetransmits", Counter("camdoop_chunk_store_fast_retransmits_total", Count, "Chunk transfer fast retransmissions"));
        Add(g, "checksumMismatches", Counter("camdoop_chunk_store_checksum_mismatches_total", Count, "Chunks received whose checksum did not match"));
        Add(g, "malformed", Counter("camdoop_chunk_store_malformed_total", Frames, "Chunk store frames that did not parse"));
        Add(g, "unknownTransfers", Counter("camdoop_chunk_store_unknown_transfers_total", Frames, "Data for, or replies to, a transfer this server does not know: dropped"));
        Add(g, "controlDropped", Counter("camdoop_chunk_store_control_dropped_total", Frames, "Chunk store control frames dropped"));
        Add(g, "busy", Counter("camdoop_chunk_store_busy_total", Count, "Requests refused because the store was busy"));
        Add(g, "corruptDetected", Counter("camdoop_chunk_store_corrupt_detected_total", Count, "Replicas found corrupt when read"));
        Add(g, "repairsStarted", Counter("camdoop_chunk_store_repairs_started_total", Count, "Repairs of a corrupt replica started"));
        Add(g, "repairsCompleted", Counter("camdoop_chunk_store_repairs_completed_total", Count, "Repairs of a corrupt replica completed"));
        Add(g, "storageErrors", Counter("camdoop_chunk_store_storage_errors_total", Count, "Disk operations that failed"));
        Add(g, "diskFull", Counter("camdoop_chunk_store_disk_full_total", Count, "Writes refused because the disk was full"));
        Add(g, "serversLost", Counter("camdoop_chunk_store_servers_lost_total", Count, "Servers this one saw unreachable past the grace period"));
        Add(g, "replicaCopiesPending", Gauge("camdoop_chunk_store_replica_copies_pending", Count, "Replica copies waiting to be sent to restore replicas or move them where they belong"));
        Add(g, "replicasCopied", Counter("camdoop_chunk_store_replicas_copied_total", Count, "Replica copies sent"));
        Add(g, "replicaBytesCopied", Counter("camdoop_chunk_store_replica_copied_bytes_total", Bytes, "Bytes of the replica copies sent"));
        Add(g, "replicasConfirmed", Counter("camdoop_chunk_store_replicas_confirmed_total", Count, "Copies found unneeded: the target held a good replica"));
        Add(g, "replicaCopiesFailed", Counter("camdoop_chunk_store_replica_copies_failed_total", Count, "Replica copies that failed"));
        Add(g, "replicasDropped", Counter("camdoop_chunk_store_replicas_dropped_total", Count, "Replicas dropped because three good ones are held where they belong"));
        Add(g, "tombstonesKept", Counter("camdoop_chunk_store_tombstones_kept_total", Count, "Dataset removals made while some server was away, remembered as a tombstone"));
        Add(g, "tombstonesSent", Counter("camdoop_chunk_store_tombstones_sent_total", Count, "Tombstones sent to a server that had not applied them"));
        Add(g, "tombstoneReplicasDropped", Counter("camdoop_chunk_store_tombstone_replicas_dropped_total", Count, "Replicas dropped because a tombstone named them"));
        Add(g, "removedOffersRefused", Counter("camdoop_chunk_store_removed_offers_refused_total", Count, "Offers of a replica a tombstone names, refused"));
        Add(g, "scrubPasses", Counter("camdoop_chunk_store_scrub_passes_total", Count, "Full scrub passes over the replicas held"));
        Add(g, "scrubChunks", Counter("camdoop_chunk_store_scrubbed_replicas_total", Count, "Replicas the scrubber checked"));
        Add(g, "scrubBytes", Counter("camdoop_chunk_store_scrubbed_bytes_total", Bytes, "Bytes of the replicas the scrubber checked"));
        Add(g, "scrubCorrupt", Counter("camdoop_chunk_store_scrub_corrupt_total", Count, "Replicas the scrubber found corrupt or missing"));
        Add(g, "scrubRepaired", Counter("camdoop_chunk_store_scrub_repaired_total", Count, "Corrupt replicas the scrubber repaired from another replica"));
        Add(g, "scrubUnrepairable", Counter("camdoop_chunk_store_scrub_unrepairable_total", Count, "Corrupt replicas no good replica could repair"));
        Add(g, "scrubLastPassEnd", Gauge("camdoop_chunk_store_scrub_last_pass_end_timestamp_seconds", Seconds, "When the last full scrub pass ended, Unix time; 0 before the first") with { Divisor = 1e3 });
    }

    private static void Shuffle()
    {
        const string g = "camdoop";
        Add(g, "jobs", Gauge("camdoop_shuffle_jobs", Count, "MapReduce jobs whose shuffle runs on the server now"));
        Add(g, "bufferBytesRented", Gauge("camdoop_shuffle_buffer_rented_bytes", Bytes, "Shuffle buffers the server's jobs hold now"));
        Add(g, "dataFramesSent", Counter("camdoop_shuffle_data_frames_sent_total", Frames, "Shuffle data frames sent"));
        Add(g, "dataBytesSent", Counter("camdoop_shuffle_data_sent_bytes_total", Bytes, "Record-stream bytes put into shuffle segments, retransmissions included"));
        Add(g, "dataBytesReceived", Counter("camdoop_shuffle_data_received_bytes_total", Bytes, "New in-order record-stream bytes accepted from the network"));
        Add(g, "retransmittedBytes", Counter("camdoop_shuffle_retransmitted_bytes_total", Bytes, "Shuffle bytes sent again"));
        Add(g, "timeouts", Counter("camdoop_shuffle_timeouts_total", Count, "Shuffle retransmission timeouts"));
        Add(g, "fastRetransmits", Counter("camdoop_shuffle_fast_retransmits_total", Count, "Shuffle fast retransmissions"));
        Add(g, "unknownJob", Counter("camdoop_shuffle_unknown_job_total", Frames, "Shuffle frames or entries for a job the server does not run"));
        Add(g, "malformed", Counter("camdoop_shuffle_malformed_total", Frames, "Shuffle frames dropped as malformed, for any reason"));
        Reason(g, "malformed", Counter("camdoop_shuffle_malformed_by_reason_total", Frames, "Shuffle frames dropped as malformed, by reason"));
    }

    private static void FrontEnd()
    {
        const string g = "frontEnd";
        Add(g, "connections", Counter("camdoop_frontend_connections_total", Count, "Client connections the front-end accepted"));
        Add(g, "authenticated", Counter("camdoop_frontend_authenticated_total", Count, "Connections whose client showed a client certificate of the cluster's CA"));
        Add(g, "requests", Counter("camdoop_frontend_requests_total", Count, "Requests served"));
        Add(g, "malformed", Counter("camdoop_frontend_malformed_total", Count, "Messages that did not parse"));
        Add(g, "oversized", Counter("camdoop_frontend_oversized_total", Count, "Messages over the size limit"));
        Add(g, "truncated", Counter("camdoop_frontend_truncated_total", Count, "Connections the client closed in the middle of a message"));
        Add(g, "refused", Counter("camdoop_frontend_refused_total", Count, "Connections refused over the connection limit"));
        Add(g, "handlerFailures", Counter("camdoop_frontend_handler_failures_total", Count, "Requests whose handler failed unexpectedly"));
        Add(g, "authNoHandshake", Counter("camdoop_frontend_refused_no_handshake_total", Count, "Connections refused: no TLS handshake in time"));
        Add(g, "authCertificate", Counter("camdoop_frontend_refused_certificate_total", Count, "Connections refused for their certificate: none, another CA's, expired, revoked, or a node's"));
        Add(g, "authMalformed", Counter("camdoop_frontend_refused_malformed_handshake_total", Count, "Connections refused: what the client sent was not TLS 1.3"));
        Add(g, "authEvicted", Counter("camdoop_frontend_handshakes_evicted_total", Count, "Connections still authenticating that made way for a newer one"));
        Add(g, "authPerAddress", Counter("camdoop_frontend_refused_per_address_total", Count, "Connections refused because their address had its share of the pool"));
        Add(g, "authPoolFull", Counter("camdoop_frontend_refused_pool_full_total", Count, "Connections refused because the pool was full"));
        Add(g, "overLimit", Counter("camdoop_frontend_over_limit_total", Count, "Connections closed over their requests or bytes in flight"));
        Add(g, "writeTimeouts", Counter("camdoop_frontend_write_timeouts_total", Count, "Connections closed because the client took no reply in time"));
        Add(g, "idleClosed", Counter("camdoop_frontend_idle_closed_total", Count, "Connections closed for being idle"));
        Add(g, "bytesHeld", Gauge("camdoop_frontend_held_bytes", Bytes, "Bytes the front-end holds for its clients now"));
        Add(g, "memoryRefused", Counter("camdoop_frontend_memory_refused_total", Count, "Requests refused for want of room in the front-end's memory budget"));
        Add(g, "queries", Gauge("camdoop_frontend_queries", Count, "Monitoring queries the front-end runs for its clients now"));
        Add(g, "queriesRefused", Counter("camdoop_frontend_queries_refused_total", Count, "Monitoring queries refused over the front-end's limits"));
    }

    private static void Web()
    {
        const string g = "web";
        Add(g, "requests", Counter("camdoop_web_requests_total", Count, "Web view requests read in full and served"));
        Add(g, "badRequests", Counter("camdoop_web_bad_requests_total", Count, "Web view requests refused unread or half read"));
        Add(g, "refused", Counter("camdoop_web_refused_total", Count, "Web view connections closed at once over the connection limit"));
        Add(g, "failures", Counter("camdoop_web_failures_total", Count, "Web view requests whose handler failed (500)"));
        Add(g, "handshakeFailures", Counter("camdoop_web_handshake_failures_total", Count, "Web view TLS handshakes that failed"));
        Add(g, "unauthorized", Counter("camdoop_web_unauthorized_total", Count, "Web view requests refused for want of a session or token (401)"));
        Add(g, "logins", Counter("camdoop_web_logins_total", Count, "Web view sessions opened"));
        Add(g, "sessions", Gauge("camdoop_web_sessions", Count, "Web view sessions live now"));
        Add(g, "notFound", Counter("camdoop_web_not_found_total", Count, "Web view requests for nothing there (404)"));
        Add(g, "standingQueries", Gauge("camdoop_web_standing_queries", Count, "Monitoring queries the web view keeps asking now"));
        Add(g, "scrapes", Counter("camdoop_web_scrapes_total", Count, "Metrics expositions served at /metrics"));
    }

    private static MetricDefinition Counter(string name, string unit, string help) => new(name, MetricKind.Counter, unit, help);

    private static MetricDefinition Gauge(string name, string unit, string help) => new(name, MetricKind.Gauge, unit, help);

    private static void Server(string key, MetricDefinition metric) => Add("server", key, metric);

    private static void Link(string key, MetricDefinition metric) => Add("link", key, metric with { Label = "port" });

    private static void Add(string group, string key, MetricDefinition metric)
    {
        Counters.Add((group, key), metric);
        Define(metric);
    }

    private static void Define(MetricDefinition metric)
    {
        Definitions.Add(metric);
        ByName.Add(metric.Name, metric);
    }

    private static void Reason(string group, string prefix, MetricDefinition metric)
    {
        var labelled = metric with { Label = "reason" };
        Reasons.Add((group, prefix, labelled));
        Define(labelled);
    }
}

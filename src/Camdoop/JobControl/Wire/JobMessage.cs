namespace Camdoop.JobControl.Wire;

/// <summary>
/// Job control messages. Worker messages go to the job's coordinator (the owner of its control key among the job's
/// servers); record messages go from the coordinator to the two servers that keep a copy of the job's control state;
/// query messages come from any server's front-end.
/// </summary>
public enum JobMessage : byte
{
    /// <summary>Coordinator to server (extra: attempt): description | output dataset | the map-task directory.</summary>
    Start = 1,

    /// <summary>Server to coordinator (extra: attempt): the map phase ended (status, sizes, map time).</summary>
    MapDone = 2,

    /// <summary>Coordinator to server (extra: attempt): every server has mapped; start the shuffle (the Camdoop paper, §4).</summary>
    Shuffle = 3,

    /// <summary>Server to coordinator, periodic and unacknowledged: what this server did for the job so far.</summary>
    Progress = 4,

    /// <summary>Server to coordinator (extra: reduce task): a reduce task rooted here finished (sizes, checksum, where its output is).</summary>
    ReduceDone = 5,

    /// <summary>Server to coordinator (extra: attempt): the job failed here.</summary>
    Failed = 6,

    /// <summary>
    /// Coordinator to server (extra: attempt): the job is over for this server; drop its state and map outputs. A body
    /// byte <see cref="ControlWire.EndDiscardOutput"/> (the job was killed, or the attempt is being started over) also
    /// deletes its partial reduce outputs; <see cref="ControlWire.EndCompleted"/> tells that the job completed.
    /// </summary>
    End = 7,

    /// <summary>Acknowledges one fragment of a reliable message: the acknowledged kind, and for an End the server's final counts.</summary>
    Ack = 8,

    /// <summary>Coordinator to a record keeper: the job's whole control state, merged into the copy held there.</summary>
    Record = 9,

    /// <summary>Coordinator to a record keeper (extra: sequence): one change of the control state (a reduce task done, a server lost).</summary>
    RecordUpdate = 10,

    /// <summary>
    /// Coordinator to server: the reduce tasks done whose output outlives their root (stored as a chunk, or not kept
    /// at all), as a bitmap; a server does not start one of them over when its root is lost (the Camdoop paper, §4.2).
    /// </summary>
    ReducesDone = 11,

    /// <summary>Front-end's server to a coordinator (extra: query id): status, or kill (body), of a job.</summary>
    Query = 12,

    /// <summary>Answer to a <see cref="Query"/> (extra: query id): a snapshot of the job, or why there is none.</summary>
    QueryReply = 13,
}

using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl.Wire;

/// <summary>What a front-end asks a coordinator (the body of a <see cref="JobMessage.Query"/>).</summary>
public enum QueryOp : byte
{
    /// <summary>A job's snapshot.</summary>
    Status = 1,

    /// <summary>Kill the job, then its snapshot.</summary>
    Kill = 2,

    /// <summary>Snapshots of every job coordinated there.</summary>
    List = 3,
}

/// <summary>How a <see cref="JobMessage.QueryReply"/> answers.</summary>
public enum QueryResult : byte
{
    /// <summary>From the job's coordinator: its snapshots follow.</summary>
    Coordinator = 0,

    /// <summary>From a server that keeps a copy of the job's state but does not coordinate it: one snapshot follows.</summary>
    Copy = 1,

    /// <summary>The server knows no such job.</summary>
    Unknown = 2,

    /// <summary>The request failed there (a job that cannot be killed): a reason follows.</summary>
    Error = 3,
}

/// <summary>Encodes and decodes query replies.</summary>
public static class QueryReplies
{
    public static byte[] Snapshots(QueryResult result, IReadOnlyCollection<JobSnapshot> snapshots, Torus torus)
    {
        ArgumentNullException.ThrowIfNull(snapshots);
        var w = new ControlWire.Writer(64 + (snapshots.Count * 256));
        w.U8((byte)result);
        w.U32((uint)snapshots.Count);
        foreach (var s in snapshots)
        {
            s.Write(w, torus);
        }
        return w.ToArray();
    }

    public static byte[] Message(QueryResult result, string? text)
    {
        var w = new ControlWire.Writer(64);
        w.U8((byte)result);
        w.String(text);
        return w.ToArray();
    }

    /// <summary>Reads a reply; false when it is malformed.</summary>
    public static bool TryRead(ReadOnlySpan<byte> body, Torus torus, out QueryResult result, out List<JobSnapshot> snapshots, out string? message)
    {
        var r = new ControlWire.Reader(body);
        result = (QueryResult)r.U8();
        snapshots = [];
        message = null;
        if (!r.Ok || result > QueryResult.Error)
        {
            return false;
        }
        if (result is QueryResult.Unknown or QueryResult.Error)
        {
            message = r.String();
            return r.Ok && r.AtEnd;
        }
        int count = r.Count(40);
        for (int i = 0; i < count && r.Ok; i++)
        {
            if (JobSnapshot.Read(ref r, torus) is not { } snapshot)
            {
                return false;
            }
            snapshots.Add(snapshot);
        }
        return r.Ok && r.AtEnd;
    }
}

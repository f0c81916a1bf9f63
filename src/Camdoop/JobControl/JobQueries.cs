using Camdoop.ChunkStore;
using Camdoop.JobControl.Channel;
using Camdoop.JobControl.Wire;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// Any server's answers about any job, for its front-end: a job's status, killing it, and the list of every job on
/// the cube. A job is asked of the server that owns its control key (its coordinator), then of the next owners, which
/// keep copies of its state; the list asks every server for the jobs it coordinates. Answers come on the event loop.
/// </summary>
internal sealed class JobQueries(ControlContext control, JobCoordinator coordinator, RecordKeeper keeper)
{
    private readonly Dictionary<uint, Action<Coordinate, QueryResult, List<JobSnapshot>, string?>> _waiting = [];
    private uint _nextQuery;

    private ControlChannel Channel => control.Channel;

    /// <summary>The status of any job: from its coordinator, else from a copy of its state; null with the reason when none answers.</summary>
    public void Status(ulong jobId, Action<JobSnapshot?, string?> done) => Ask(jobId, QueryOp.Status, done);

    /// <summary>Kills any job at its coordinator; its snapshot after the kill, or null with the reason.</summary>
    public void Kill(ulong jobId, Action<JobSnapshot?, string?> done) => Ask(jobId, QueryOp.Kill, done);

    /// <summary>
    /// Every job the reachable servers coordinate. A server that does not answer within
    /// <see cref="JobControlOptions.QueryTimeout"/> is named in the listing, not waited for: its jobs are missing.
    /// </summary>
    public void List(Action<JobListing> done)
    {
        ArgumentNullException.ThrowIfNull(done);
        var found = new Dictionary<ulong, JobSnapshot>();
        foreach (var job in coordinator.Jobs)
        {
            found[job.JobId] = job.Snapshot(control.Self, control.Now);
        }
        var pending = control.Hosts.All().Where(h => h != control.Self && control.IsServer(h) && control.IsReachable(h)).ToHashSet();
        var asked = pending.ToList();
        bool finished = false;
        uint id = ++_nextQuery;
        void Finish()
        {
            if (!finished)
            {
                finished = true;
                _waiting.Remove(id);
                foreach (var server in pending)
                {
                    Channel.Cancel(server, JobMessage.Query, 0, id);
                }
                done(new JobListing(
                    [.. found.Values.OrderByDescending(s => s.SubmittedUnixMs).ThenBy(s => s.JobId)],
                    [.. asked.Where(pending.Contains)]));
            }
        }
        if (pending.Count == 0)
        {
            Finish();
            return;
        }
        _waiting[id] = (from, result, snapshots, _) =>
        {
            if (result == QueryResult.Coordinator)
            {
                foreach (var s in snapshots)
                {
                    found[s.JobId] = s;
                }
            }
            if (pending.Remove(from) && pending.Count == 0)
            {
                Finish();
            }
        };
        foreach (var server in asked)
        {
            Channel.SendReliable(server, JobMessage.Query, 0, id, [(byte)QueryOp.List]);
        }
        control.Node.SetTimer(control.Options.QueryTimeout, Finish);
    }

    private void Ask(ulong jobId, QueryOp op, Action<JobSnapshot?, string?> done)
    {
        ArgumentNullException.ThrowIfNull(done);
        if (coordinator.GetJob(jobId) is { } local)
        {
            Answer(local, op, done);
            return;
        }
        // The job's coordinator owns its control key among the job's servers; asked in the order they would own it.
        var candidates = ChunkPlacement.Targets(control.Mapper, JobKeys.ControlKey(jobId), control.ReachableServers());
        JobSnapshot? copy = keeper.GetCopy(jobId)?.Snapshot(control.Self, control.Servers.Count, control.UnixMs);
        AskNext(jobId, op, candidates.Where(c => c != control.Self).ToList(), 0, copy, done);
    }

    private void AskNext(ulong jobId, QueryOp op, List<Coordinate> candidates, int next, JobSnapshot? copy, Action<JobSnapshot?, string?> done)
    {
        if (next >= candidates.Count)
        {
            if (op == QueryOp.Status && copy is not null)
            {
                done(copy, null);
            }
            else
            {
                done(null, copy is not null
                    ? $"job {jobId:x16} has no coordinator that answers (its state is kept, but nobody runs it now)"
                    : $"unknown job {jobId:x16}");
            }
            return;
        }
        uint id = ++_nextQuery;
        var server = candidates[next];
        bool answered = false;
        var timer = control.Node.SetTimer(control.Options.QueryTimeout, () =>
        {
            if (!answered && _waiting.Remove(id))
            {
                answered = true;
                Channel.Cancel(server, JobMessage.Query, jobId, id);
                AskNext(jobId, op, candidates, next + 1, copy, done);
            }
        });
        _waiting[id] = (from, result, snapshots, message) =>
        {
            if (answered)
            {
                return;
            }
            answered = true;
            _waiting.Remove(id);
            control.Node.CancelTimer(timer);
            switch (result)
            {
                case QueryResult.Coordinator when snapshots.Count == 1:
                    done(snapshots[0], null);
                    return;
                case QueryResult.Error:
                    done(null, message);
                    return;
                case QueryResult.Copy when snapshots.Count == 1 && (copy is null || Rank(snapshots[0]) > Rank(copy)):
                    AskNext(jobId, op, candidates, next + 1, snapshots[0], done);
                    return;
                default:
                    AskNext(jobId, op, candidates, next + 1, copy, done);
                    return;
            }
        };
        Channel.SendReliable(server, JobMessage.Query, jobId, id, [(byte)op]);
    }

    private static int Rank(JobSnapshot s) => s.State.IsOver() ? 3 : s.Finishing ? 2 : s.State == JobState.Shuffling ? 1 : 0;

    private void Answer(JobTracker job, QueryOp op, Action<JobSnapshot?, string?> done)
    {
        if (op == QueryOp.Kill)
        {
            try
            {
                coordinator.Kill(job.JobId);
            }
            catch (JobControlException e)
            {
                done(null, e.Message);
                return;
            }
        }
        done(job.Snapshot(control.Self, control.Now), null);
    }

    /// <summary>A front-end elsewhere asks: answer from the job coordinated here, or a copy of its state, or say it is unknown.</summary>
    public Delivery OnQuery(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        if (body.Length != 1 || body[0] is 0 or > (byte)QueryOp.List)
        {
            return Delivery.Malformed;
        }
        var op = (QueryOp)body[0];
        byte[] reply;
        if (op == QueryOp.List)
        {
            reply = QueryReplies.Snapshots(QueryResult.Coordinator, [.. coordinator.Jobs.Select(j => j.Snapshot(control.Self, control.Now))], control.Hosts);
        }
        else if (coordinator.GetJob(header.JobId) is { } job)
        {
            string? error = null;
            JobSnapshot? snapshot = null;
            Answer(job, op, (s, e) => (snapshot, error) = (s, e));
            reply = snapshot is not null
                ? QueryReplies.Snapshots(QueryResult.Coordinator, [snapshot], control.Hosts)
                : QueryReplies.Message(QueryResult.Error, error);
        }
        else if (keeper.GetCopy(header.JobId) is { } copy)
        {
            reply = QueryReplies.Snapshots(QueryResult.Copy, [copy.Snapshot(control.Self, control.Servers.Count, control.UnixMs)], control.Hosts);
        }
        else
        {
            reply = QueryReplies.Message(QueryResult.Unknown, $"unknown job {header.JobId:x16}");
        }
        Channel.SendReliable(from, JobMessage.QueryReply, header.JobId, header.Extra, reply);
        return Delivery.Acknowledge;
    }

    public Delivery OnQueryReply(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        if (!QueryReplies.TryRead(body, control.Hosts, out var result, out var snapshots, out string? message))
        {
            return Delivery.Malformed;
        }
        if (_waiting.TryGetValue(header.Extra, out var waiting))
        {
            waiting(from, result, snapshots, message);
        }
        return Delivery.Acknowledge;
    }
}

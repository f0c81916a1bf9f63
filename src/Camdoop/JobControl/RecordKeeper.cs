using Camdoop.JobControl.Channel;
using Camdoop.JobControl.Wire;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// The copies of other coordinators' job state this server keeps (it is among the next owners of their control keys).
/// When a job's coordinator becomes unreachable and this server now owns the job's control key among the job's live
/// servers, it takes the job over (<see cref="JobCoordinator.TakeOver"/>).
/// </summary>
internal sealed class RecordKeeper(ControlContext control, JobCoordinator coordinator)
{
    private readonly Dictionary<ulong, Copy> _copies = [];

    public int Count => _copies.Count;

    public JobRecord? GetCopy(ulong jobId) => _copies.GetValueOrDefault(jobId)?.Record;

    public IEnumerable<JobRecord> Copies => _copies.Values.Select(c => c.Record);

    public Delivery OnRecord(Coordinate from, ReadOnlySpan<byte> body)
    {
        var record = JobRecord.Decode(body, control.Hosts);
        if (record is null)
        {
            return Delivery.Malformed;
        }
        if (coordinator.GetJob(record.JobId) is not null)
        {
            return Delivery.Acknowledge; // coordinated here now: a late copy from the old coordinator
        }
        if (_copies.TryGetValue(record.JobId, out var copy))
        {
            copy.Record.Merge(record);
            copy.Coordinator = from;
        }
        else
        {
            _copies[record.JobId] = new Copy(record, from, control.Now);
            Trim();
        }
        return Delivery.Acknowledge;
    }

    public Delivery OnRecordUpdate(ulong jobId, ReadOnlySpan<byte> body)
    {
        if (coordinator.GetJob(jobId) is not null)
        {
            return Delivery.Acknowledge;
        }
        if (!_copies.TryGetValue(jobId, out var copy))
        {
            return Delivery.NotYet; // the whole record is still on its way
        }
        return copy.Record.ApplyUpdate(body, control.Hosts) ? Delivery.Acknowledge : Delivery.Malformed;
    }

    /// <summary>Servers became unreachable: take over the jobs whose coordinator is gone and whose control key is now this server's.</summary>
    public void OnServersLost()
    {
        foreach (var (jobId, copy) in _copies.ToList())
        {
            if (control.IsReachable(copy.Coordinator))
            {
                continue;
            }
            var record = copy.Record;
            var live = record.Directory.Keys.Select(control.Hosts.CoordinateOf)
                .Where(h => record.Losses.All(l => l.Server != h) && control.IsReachable(h));
            if (control.CoordinatorOf(jobId, control.ServerView(live)) == control.Self)
            {
                _copies.Remove(jobId);
                coordinator.TakeOver(record, copy.Coordinator);
            }
        }
    }

    /// <summary>Keeps at most as many copies of ended jobs as the options allow, dropping the oldest.</summary>
    private void Trim()
    {
        int excess = _copies.Values.Count(c => c.Record.State.IsOver()) - control.Options.MaxEndedJobs;
        if (excess <= 0)
        {
            return;
        }
        foreach (var (jobId, _) in _copies.Where(c => c.Value.Record.State.IsOver()).OrderBy(c => c.Value.ReceivedAt).Take(excess).ToList())
        {
            _copies.Remove(jobId);
        }
    }

    private sealed class Copy(JobRecord record, Coordinate coordinator, long receivedAt)
    {
        public JobRecord Record { get; } = record;

        /// <summary>The server that sent the latest copy: the job's coordinator.</summary>
        public Coordinate Coordinator { get; set; } = coordinator;

        public long ReceivedAt { get; } = receivedAt;
    }
}

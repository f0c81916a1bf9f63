using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

// Servers lost, as a worker sees them. The shuffle recovers on its own (the Camdoop service listens first); the worker
// turns to a new coordinator when its own is lost (the next owner of the job's control key among the job's live
// servers, which keeps a copy of the job's state) and tells it again what it had reported; and it repairs a stream
// shuffle's trees when an appliance fails.
internal sealed partial class JobWorker
{
    public void OnOwnershipChanged(OwnershipChange change)
    {
        if (_stopped || change.BecameUnreachable.Count == 0)
        {
            return;
        }
        foreach (var lost in change.BecameUnreachable)
        {
            if (!_control.IsServer(lost))
            {
                _lostAppliances.Add(Hosts.IndexOf(lost));
            }
        }
        foreach (var work in _work.Values.ToList())
        {
            foreach (var lost in change.BecameUnreachable)
            {
                if (!work.Members.Remove(lost))
                {
                    continue;
                }
                if (!_control.IsServer(lost))
                {
                    RepairPlan(work, Hosts.IndexOf(lost));
                }
            }
            if (!work.Members.Contains(work.Coordinator) && _control.CoordinatorOf(work.JobId, _control.ServerView(work.Members)) is { } next)
            {
                SwitchCoordinator(work, next);
            }
        }
        // A server whose part of a job had finished may have taken over a lost server's work: report it too.
        ArmProgressReports();
    }

    /// <summary>
    /// Whether a message of <paramref name="work"/> from <paramref name="from"/> speaks for the job's coordinator: its
    /// own, or a server of the job that took over from a coordinator this server sees lost.
    /// </summary>
    private bool AcceptFrom(WorkerJob work, Coordinate from)
    {
        if (from == work.Coordinator)
        {
            return true;
        }
        if (!work.Members.Contains(from) || work.Members.Contains(work.Coordinator))
        {
            return false;
        }
        SwitchCoordinator(work, from);
        return true;
    }

    /// <summary>Reports to <paramref name="next"/> from now on, and tells it again everything reported to the last one.</summary>
    private void SwitchCoordinator(WorkerJob work, Coordinate next)
    {
        if (next == work.Coordinator)
        {
            return;
        }
        CoordinatorChanges++;
        _control.Log(LogLevel.Warning, $"job {work.JobId:x16}: coordinator {work.Coordinator.Name} is lost; reporting to {next.Name}");
        Channel.CancelAll(work.Coordinator, work.JobId, JobMessage.MapDone, JobMessage.ReduceDone, JobMessage.Failed);
        work.Coordinator = next;
        if (work.MapReport is not null)
        {
            SendMapReport(work);
        }
        foreach (var (task, report) in work.ReduceReports)
        {
            Channel.SendReliable(next, JobMessage.ReduceDone, work.JobId, (uint)task, report, () => Abandon(work));
        }
        if (work.Failure is not null)
        {
            SendFailure(work);
        }
        work.LastReported = new WorkerTotals(-1, 0, 0, 0);
    }

    /// <summary>An appliance of a stream shuffle's trees failed: its children send to the next node on the path.</summary>
    private void RepairPlan(WorkerJob work, int appliance)
    {
        if (work.DirectJob is null || work.Plan is not IApplianceTolerantPlan plan || _direct is null)
        {
            return;
        }
        var repaired = plan.WithoutAppliance(appliance);
        work.Plan = repaired;
        _direct.OnApplianceFailed(work.Description.JobId, appliance, repaired, repaired.Nodes);
    }
}

using Camdoop.ChunkStore;
using Camdoop.JobControl.Wire;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

// Copies of a job's control state: the two servers that own its control key after the coordinator keep one, as the
// chunk store keeps a chunk's replicas. The whole record goes out when the job is submitted, when its phase changes
// and when the keepers change; a reduce task done or a server lost goes out as an update. A job is accepted (and its
// servers told to start) only once both keepers hold it, so a coordinator that dies the moment after loses nothing.
internal sealed partial class JobCoordinator
{
    private readonly Dictionary<ulong, HashSet<Coordinate>> _keepers = [];

    /// <summary>The servers that keep copies of <paramref name="job"/>'s state: the next owners of its control key among its live servers.</summary>
    private List<Coordinate> Keepers(JobTracker job)
    {
        var view = _control.ServerView(job.Participants.Where(_control.IsReachable).Append(_control.Self));
        return [.. ChunkPlacement.Targets(_control.Mapper, JobKeys.ControlKey(job.JobId), view).Where(c => c != _control.Self)];
    }

    /// <summary>Sends the whole record to the job's keepers; <paramref name="then"/> runs once each has it or was given up on.</summary>
    private void Replicate(JobTracker job, Action? then = null)
    {
        var keepers = Keepers(job);
        _keepers[job.JobId] = [.. keepers];
        if (keepers.Count == 0)
        {
            then?.Invoke();
            return;
        }
        var bytes = job.Record.Encode(Hosts);
        int waiting = keepers.Count;
        void One()
        {
            if (--waiting == 0)
            {
                then?.Invoke();
            }
        }
        foreach (var keeper in keepers)
        {
            Channel.SendReliable(keeper, JobMessage.Record, job.JobId, 0, bytes, onGiveUp: One, onDelivered: One);
        }
    }

    /// <summary>Sends one change of the record to the job's keepers.</summary>
    private void ReplicateUpdate(JobTracker job, byte[] update)
    {
        if (!_keepers.TryGetValue(job.JobId, out var keepers))
        {
            return;
        }
        foreach (var keeper in keepers)
        {
            Channel.SendReliable(keeper, JobMessage.RecordUpdate, job.JobId, NextSequence(), update);
        }
    }

    /// <summary>After the servers alive changed: jobs whose keepers changed send their whole record to the new ones.</summary>
    private void RefreshKeepers()
    {
        foreach (var job in _jobs.Values)
        {
            if (!job.Accepted)
            {
                continue; // its first copy is still on its way; the acceptance waits for it
            }
            var keepers = Keepers(job);
            if (!_keepers.TryGetValue(job.JobId, out var held) || !held.SetEquals(keepers))
            {
                Replicate(job);
            }
        }
    }

    /// <summary>
    /// Takes over a job whose coordinator died, from the copy of its state kept here: the dead coordinator and every
    /// other server gone since are lost to the job; the servers still in it are told again what phase the job is in
    /// (they ignore what they already did) and report to this server from now on.
    /// </summary>
    public void TakeOver(JobRecord record, Coordinate previous)
    {
        ArgumentNullException.ThrowIfNull(record);
        if (_jobs.ContainsKey(record.JobId))
        {
            return;
        }
        var participants = record.Directory.Keys.Select(Hosts.CoordinateOf)
            .Where(h => record.Losses.All(l => l.Server != h) && _control.IsReachable(h)).ToList();
        var job = new JobTracker(record, Hosts, _control.Servers.Count, participants, _control.Now, _control.UnixMs);
        job.Accept();
        _jobs[record.JobId] = job;
        Takeovers++;
        _control.Log(LogLevel.Warning, $"job {record.JobId:x16}: its coordinator {previous.Name} is lost; {_control.Self.Name} takes the job over while {(job.Finishing ? "finishing" : job.State.Name())}");
        if (job.IsOver)
        {
            Ended(job);
            Replicate(job);
            return;
        }
        // Everyone the job had, less who is here now, is lost to it: the dead coordinator first.
        var lost = record.Directory.Keys.Select(Hosts.CoordinateOf).Where(h => !participants.Contains(h) && record.Losses.All(l => l.Server != h)).ToList();
        Replicate(job);
        ArmStallCheck(job);
        if (!job.Finishing)
        {
            // Tell every server the phase again (idempotent where it already knew) before the losses' consequences.
            if (job.State == JobState.Mapping)
            {
                SendStart(job);
            }
            else
            {
                SendShuffle(job);
            }
        }
        LoseServers(job, lost, alreadyOut: true);
        if (job.Finishing)
        {
            EndEverywhere(job);
            return;
        }
        if (!job.IsOver && job.State == JobState.Shuffling && job.ReducesDone == job.Description.ReduceTasks)
        {
            if (job.OutputDataset is null)
            {
                Complete(job);
            }
            else
            {
                StoreOutputManifest(job);
            }
        }
        StartShuffleWhenMapped(job);
    }
}

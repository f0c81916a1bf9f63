using Camdoop.KeyRouting;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// The requests one job's vertices on this server send to restart a child's stream after a failure (the Camdoop paper,
/// §4.2): each goes to the owner of the child's key in the job's view (<see cref="TargetOf"/>), and again while no
/// restart has begun, after a retry interval that doubles per attempt up to eight times itself.
/// </summary>
internal sealed class ResumeRequests(ServerJob job, CamdoopService service, JobView view)
{
    private readonly List<(VertexBase Parent, InboundStream Child)> _pending = [];
    private bool _timerArmed;

    /// <summary>The server to ask for <paramref name="child"/>'s restart: the owner of its vertex's or its map task's key.</summary>
    public int TargetOf(InboundStream child) => view.OwnerIndex(OwnerKeyOf(child));

    private Key OwnerKeyOf(InboundStream child) => child.Source == 0
        ? job.Placement.VertexKey(child.Child, child.ReduceTask, child.Tree, job.RootOf(child.ReduceTask))
        : job.MapTasks.MapTasksOf(child.Child)[child.Source - 1];

    /// <summary>Asks the owner of <paramref name="child"/>'s sender to restart it at its pending point (and again until it does).</summary>
    public void Send(VertexBase parent, InboundStream child)
    {
        var point = child.PendingResume;
        if (point is null || job.Failure is not null)
        {
            return;
        }
        int target = TargetOf(child);
        if (target < 0)
        {
            return;
        }
        if (child.ResumeAttempts == 0)
        {
            _pending.Add((parent, child));
        }
        var torus = job.Placement.Torus;
        child.ResumeTarget = target;
        child.ResumeSentAt = job.Transport.Context.Now;
        child.ResumeAttempts++;
        if (child.ResumeAttempts == 1 || child.ResumeAttempts % 4 == 0)
        {
            job.Log($"asks {torus.CoordinateOf(target).Name} to restart stream {child.ReduceTask}/{child.Tree}/{child.Child.Name}/{child.Source} (attempt {child.ResumeAttempts})");
        }
        var request = new ResumeRequest(child.Id, job.Self, child.RequestEpoch, point.HasKey, point.Key, point.Skip);
        SendControl(job.Placement.VertexId(torus.CoordinateOf(target)), request);
        ArmTimer();
    }

    private void SendControl(Key destination, in ResumeRequest request)
    {
        int keyLength = request.HasKey ? request.Key.Length : 0;
        if (keyLength > ShuffleWire.MaxResumeKeyBytes)
        {
            // Asking again would never get through: the job fails with the reason instead of waiting forever.
            var s = request.Stream;
            service.FailJob(job, $"stream {s.ReduceTask}/{s.Tree}/{s.Child.Name} cannot resume after a {keyLength}-byte key: a restart request carries keys of at most {ShuffleWire.MaxResumeKeyBytes} bytes");
            return;
        }
        var entry = new byte[ShuffleWire.ResumeEntrySize(keyLength)];
        ShuffleWire.WriteResume(entry, request);
        job.Transport.QueueControl(job.JobId, destination, entry);
    }

    private void ArmTimer()
    {
        if (_timerArmed)
        {
            return;
        }
        _timerArmed = true;
        job.Transport.Context.SetTimer(RetryInterval, OnTimer);
    }

    /// <summary>How long a parent waits for a restart before asking again (doubling per attempt, up to 8 times this).</summary>
    private long RetryInterval => Math.Max(4 * job.Options.Shuffle.MinRetransmitTimeout, 20 * NodeOptions.Millisecond);

    private void OnTimer()
    {
        _timerArmed = false;
        if (job.Failure is not null)
        {
            return;
        }
        long now = job.Transport.Context.Now;
        int kept = 0;
        for (int i = 0; i < _pending.Count; i++)
        {
            var (parent, child) = _pending[i];
            if (child.PendingResume is null || !job.IsHosted(parent))
            {
                child.ResumeAttempts = 0;
                continue;
            }
            long wait = RetryInterval << Math.Min(child.ResumeAttempts - 1, 3);
            if (now - child.ResumeSentAt >= wait)
            {
                Send(parent, child);
            }
            _pending[kept++] = (parent, child);
        }
        _pending.RemoveRange(kept, _pending.Count - kept);
        if (_pending.Count > 0)
        {
            ArmTimer();
        }
        service.FlushAfterRecovery();
    }
}

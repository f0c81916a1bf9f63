using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// One job of the direct shuffle on one server (TCP Camdoop, the Camdoop paper's switched baseline): a
/// <see cref="DirectSender"/> per reduce task rooted elsewhere, a few at a time, and a <see cref="DirectReducer"/>
/// per reduce task rooted here. Reduce tasks are placed as the Camdoop modes place them, so runs are comparable.
/// </summary>
public sealed class DirectJob
{
    private readonly DirectShuffleService _service;
    private readonly Queue<DirectSender> _waiting = new();
    private readonly List<DirectSender> _senders = [];
    private readonly Dictionary<int, DirectReducer> _reducers = [];
    private readonly List<ReduceTaskResult> _completed = [];
    private int _active;

    internal DirectJob(DirectShuffleService service, JobDescription description, IMapReduceJob job, IReadOnlyList<MapOutput> mapOutputs)
    {
        _service = service;
        Description = description;
        Job = job;
        var context = service.Context;
        var torus = context.Torus;
        int self = torus.IndexOf(context.Self);
        var roots = JobPlacement.For(torus, description).RootIndices;
        var options = service.Options;
        // Each server starts with the reduce task rooted next after it, so the servers' first streams spread over the reducers.
        var order = Enumerable.Range(0, description.ReduceTasks).OrderBy(r => (roots[r] - self + torus.Count) % torus.Count).ThenBy(r => r);
        foreach (int r in order)
        {
            var local = new LocalRunMerge(job, LocalRuns(mapOutputs, r), options.LocalBlockBytes);
            if (roots[r] == self)
            {
                string? path = description.Output.Kind == OutputKind.LocalFiles ? ServerJob.OutputPath(context.DataDirectory, description, r) : null;
                _reducers.Add(r, new DirectReducer(this, r, torus.Count, self, local, new ReduceOutput(job, path), options.ReducerInputBytes, options.LocalBlockBytes));
            }
            else
            {
                _senders.Add(new DirectSender(this, r, torus.CoordinateOf(roots[r]), local));
            }
        }
    }

    public JobDescription Description { get; }

    public ulong JobId => Description.JobId;

    public IMapReduceJob Job { get; }

    /// <summary>Set when the job failed on this server (corrupt data, a job function threw); the reason.</summary>
    public string? Failure { get; private set; }

    public IReadOnlyList<ReduceTaskResult> CompletedReduceTasks => _completed;

    /// <summary>Record bytes this server's streams carried (preambles not counted).</summary>
    public long BytesSent => _senders.Sum(s => s.BytesWritten);

    /// <summary>Bytes this server's reducers took in, from the streams and from local runs.</summary>
    public long ReducedBytes => _reducers.Values.Sum(r => r.InputBytes);

    /// <summary>Every stream delivered and every reduce task rooted here written.</summary>
    public bool IsFinished => _senders.All(s => s.IsDelivered) && _reducers.Values.All(r => r.IsFinished);

    internal long Now => _service.Context.Now;

    internal void Start()
    {
        foreach (var sender in _senders)
        {
            _waiting.Enqueue(sender);
        }
        StartWaiting();
        foreach (var reducer in _reducers.Values)
        {
            Run(reducer.Pump);
        }
    }

    internal DirectReducer? Reducer(int reduceTask) => _reducers.GetValueOrDefault(reduceTask);

    internal void OnSenderDelivered(DirectSender sender)
    {
        _active--;
        StartWaiting();
    }

    internal void OnReducerCompleted(DirectReducer reducer)
    {
        var output = reducer.Output;
        var result = new ReduceTaskResult(JobId, reducer.ReduceTask, _service.Context.Self, reducer.CompletedAt, output.Records,
            output.LogicalBytes, output.StreamBytes, output.FileBytes, output.Checksum, output.Path);
        _completed.Add(result);
        _service.OnReduceTaskCompleted(result);
    }

    /// <summary>Runs job code from a transport callback: corrupt data or a job function's bug fails the job here, never the server.</summary>
    internal void Run(Action work)
    {
        if (Failure is not null)
        {
            return;
        }
        try
        {
            work();
        }
        catch (Exception e)
        {
            Fail($"{e.GetType().Name}: {e.Message}");
        }
    }

    internal void Fail(string reason)
    {
        if (Failure is null)
        {
            Failure = reason;
            _service.OnJobFailed(this);
        }
    }

    /// <summary>Tells the node the merge work done since the last call (the compute model; free on a real server).</summary>
    internal void Declare(ComputeWork kind, long consumed, ref long charged)
    {
        if (consumed > charged)
        {
            _service.Context.Compute(kind, consumed - charged);
            charged = consumed;
        }
    }

    private void StartWaiting()
    {
        while (_active < _service.Options.ConcurrentStreams && _waiting.TryDequeue(out var sender))
        {
            _active++;
            Run(() => sender.Start(_service.Transport));
        }
    }

    private static List<LocalRun> LocalRuns(IReadOnlyList<MapOutput> mapOutputs, int reduceTask)
    {
        var runs = new List<LocalRun>();
        foreach (var output in mapOutputs)
        {
            for (int stripe = 0; stripe < Records.Stripes.Count; stripe++)
            {
                var run = new LocalRun(output, reduceTask, stripe);
                if (!run.IsEmpty)
                {
                    runs.Add(run);
                }
            }
        }
        return runs;
    }
}

using System.Collections.Concurrent;
using System.Diagnostics;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Hosting;

/// <summary>
/// A real server's event loop: one thread that runs everything its <see cref="NodeHost"/> does: services, timers,
/// received frames, link events. It is the host's <see cref="INodeDriver"/> (monotonic clock, timer heap, log) and the
/// <see cref="ILinkEventSink"/> of its raw-Ethernet links (either <see cref="LinkDriver"/>).
/// <para>
/// Each iteration drains the inbox (frames, transmit-ready and carrier events posted by the links' I/O threads),
/// runs posted actions and due timers, then flushes every link's transmit ring (one sendmmsg, or one pcap_inject per
/// frame). When there is
/// nothing to do it sleeps until the next timer or until a producer wakes it; producers signal only when the loop
/// is actually asleep, so a busy loop costs its I/O threads no system calls. The inbox is drained before timers run,
/// so after a stall the neighbours' queued beacons are seen before the liveness check. A sleeping loop wakes in whole
/// milliseconds, so a timer never fires early but may fire up to about a millisecond late when the loop is idle.
/// </para>
/// </summary>
public sealed class NodeEventLoop : INodeDriver, ILinkEventSink, IDisposable
{
    private const int InboxBatch = 256;
    private const int ActionBatch = 64;
    private const int TimerBatch = 1024;
    private const int FlushRounds = 4;
    private const long MaxSleepNs = 1_000_000_000;

    private readonly INodeLog _log;
    private readonly LinkEventInbox _inbox;
    private readonly ConcurrentQueue<Action> _actions = new();
    private readonly TimerHeap _timers = new();
    private readonly IRawEthernetLink?[] _links = new IRawEthernetLink?[Ports.Count];
    // No spinning before blocking: a SemaphoreSlim spins (sched_yield) ~25 times per sleep, thousands of system
    // calls per second for an idle node, which adds up when dozens of nodes share a machine.
    private readonly ManualResetEventSlim _signal = new(false, spinCount: 0);
    private readonly long _origin = Stopwatch.GetTimestamp();
    private readonly Lock _lifecycle = new();
    private Thread? _thread;
    private int _sleeping;
    private volatile bool _stopRequested;
    private volatile int _state; // 0 created, 1 running, 2 stopped
    private volatile bool _closed; // the loop thread has exited and late actions have been drained
    private int _threadId;
    private long _iterations;
    private long _sleeps;
    private long _eventsHandled;
    private long _faults;

    /// <summary>
    /// Creates the loop and, through <paramref name="createHost"/>, the host it drives (the factory receives this loop
    /// as the host's driver: <c>driver =&gt; new NodeHost(self, torus, driver, frames, options)</c>). The inbox holds
    /// <paramref name="inboxCapacity"/> events shared by all links, each queued frame holding a 9 KB buffer; when it is
    /// full the links' I/O threads wait and their kernel socket buffers absorb the burst.
    /// </summary>
    public NodeEventLoop(Func<INodeDriver, NodeHost> createHost, INodeLog? log = null, int inboxCapacity = 2048)
    {
        ArgumentNullException.ThrowIfNull(createHost);
        _log = log ?? NodeLog.Null;
        _inbox = new LinkEventInbox(inboxCapacity);
        Host = createHost(this);
    }

    public NodeHost Host { get; }

    public INodeLog LogSink => _log;

    public bool IsRunning => _state == 1;

    /// <summary>Linux thread id of the loop thread (CPU accounting through /proc); 0 before it starts.</summary>
    public int LoopThreadId => Volatile.Read(ref _threadId);

    public long Iterations => Interlocked.Read(ref _iterations);

    /// <summary>Times the loop went to sleep for lack of work.</summary>
    public long Sleeps => Interlocked.Read(ref _sleeps);

    public long EventsHandled => Interlocked.Read(ref _eventsHandled);

    /// <summary>Exceptions that escaped the host or a posted action, logged and survived.</summary>
    public long Faults => Interlocked.Read(ref _faults);

    /// <summary>Nanoseconds since the loop was created, from the monotonic clock.</summary>
    public long Now
    {
        get
        {
            long ticks = Stopwatch.GetTimestamp() - _origin;
            long f = Stopwatch.Frequency;
            return f == 1_000_000_000 ? ticks : (ticks / f * 1_000_000_000) + (ticks % f * 1_000_000_000 / f);
        }
    }

    /// <summary>The link attached to <paramref name="port"/>, if any.</summary>
    public IRawEthernetLink? Link(Port port) => _links[(int)port];

    /// <summary>Connects <paramref name="port"/> to a link before <see cref="Start"/>; the loop owns and disposes it.</summary>
    public void AttachLink(Port port, IRawEthernetLink link)
    {
        ArgumentNullException.ThrowIfNull(link);
        lock (_lifecycle)
        {
            if (_state != 0)
            {
                throw new InvalidOperationException("links must be attached before the loop starts");
            }
            if (_links[(int)port] is not null)
            {
                throw new InvalidOperationException($"port {port.Name()} already has a link");
            }
            _links[(int)port] = link;
            Host.Attach(port, link);
        }
    }

    /// <summary>Starts the loop thread (which starts the host's services first) and the links' I/O threads.</summary>
    public void Start()
    {
        lock (_lifecycle)
        {
            if (_state != 0)
            {
                throw new InvalidOperationException("the loop has already been started");
            }
            _state = 1;
            _thread = new Thread(Run)
            {
                IsBackground = true,
                Name = $"node {Host.Self}",
            };
            _thread.Start();
            foreach (var port in Ports.All)
            {
                _links[(int)port]?.Start(port, this);
            }
        }
    }

    /// <summary>
    /// Stops the node: joins the links' I/O threads, then on the loop stops the services, flushes what the links
    /// still hold and releases undelivered frames, joins the loop thread and closes the sockets. Idempotent; must not
    /// be called from the loop thread itself.
    /// </summary>
    public void Stop()
    {
        if (Thread.CurrentThread == _thread)
        {
            throw new InvalidOperationException("Stop cannot run on the loop thread; call it from another thread");
        }
        lock (_lifecycle)
        {
            if (_state == 2)
            {
                return;
            }
            bool wasRunning = _state == 1;
            _state = 2;
            foreach (var link in _links)
            {
                link?.Stop();
            }
            if (wasRunning)
            {
                _stopRequested = true;
                _signal.Set();
                _thread!.Join();
            }
            foreach (var link in _links)
            {
                link?.Dispose();
            }
            DrainInboxDiscarding();
            RunLateActions();
            _closed = true;
            RunLateActions();
            _log.Flush();
        }
    }

    public void Dispose()
    {
        Stop();
        _signal.Dispose();
    }

    /// <summary>Runs <paramref name="action"/> on the loop thread soon. Thread-safe; its exceptions are logged.</summary>
    public void Post(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        if (_state == 2)
        {
            throw new InvalidOperationException($"node {Host.Self} has stopped");
        }
        _actions.Enqueue(action);
        AfterEnqueue();
    }

    /// <summary>Runs <paramref name="func"/> on the loop thread and completes with its result (for status queries and front-ends).</summary>
    public Task<T> InvokeAsync<T>(Func<T> func)
    {
        ArgumentNullException.ThrowIfNull(func);
        var completion = new TaskCompletionSource<T>(TaskCreationOptions.RunContinuationsAsynchronously);
        if (_state == 2)
        {
            completion.SetException(new InvalidOperationException($"node {Host.Self} has stopped"));
            return completion.Task;
        }
        _actions.Enqueue(() =>
        {
            try
            {
                completion.TrySetResult(func());
            }
            // handed to the caller through the task
            catch (Exception ex)
            {
                completion.TrySetException(ex);
            }
        });
        AfterEnqueue();
        return completion.Task;
    }

    public Task InvokeAsync(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        return InvokeAsync(() =>
        {
            action();
            return true;
        });
    }

    private void AfterEnqueue()
    {
        if (_closed)
        {
            RunLateActions();
        }
        else
        {
            Wake();
        }
    }

    // ---------------------------------------------------------------- INodeDriver (loop thread)

    public void ScheduleTimer(NodeHost host, long dueTime, long timerId)
    {
        Debug.Assert(ReferenceEquals(host, Host), "a loop drives exactly one host");
        _timers.Push(dueTime, timerId);
    }

    public void Log(Coordinate node, LogLevel level, string message) => _log.Write(NodeLogCategories.Services, node, level, message);

    public long UnixTimeMilliseconds => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

    public long ClusterTime => (DateTime.UtcNow - DateTime.UnixEpoch).Ticks * 100;

    /// <summary>Runs <paramref name="work"/> on the thread pool, then posts <paramref name="then"/> to the loop (dropped if the loop stopped).</summary>
    public void RunOffLoop(NodeHost host, Action work, Action then)
    {
        Task.Run(work).ContinueWith(
            _ =>
            {
                try
                {
                    Post(then);
                }
                catch (InvalidOperationException)
                {
                    // The node stopped meanwhile.
                }
            },
            CancellationToken.None,
            TaskContinuationOptions.None,
            TaskScheduler.Default);
    }

    // ---------------------------------------------------------------- ILinkEventSink (any thread)

    public bool TryPost(in LinkEvent linkEvent) => _inbox.TryEnqueue(linkEvent);

    public void Wake()
    {
        if (Volatile.Read(ref _sleeping) != 0 && Interlocked.Exchange(ref _sleeping, 0) != 0)
        {
            _signal.Set();
        }
    }

    void ILinkEventSink.Log(LogLevel level, string message) => _log.Write(NodeLogCategories.Links, Host.Self, level, message);

    // ---------------------------------------------------------------- the loop

    private void Run()
    {
        Volatile.Write(ref _threadId, LibC.GetTid());
        Guarded(static loop => loop.Host.Start(), this);
        while (true)
        {
            int work = DrainInbox() + RunActions(ActionBatch) + RunTimers() + FlushLinks();
            Interlocked.Increment(ref _iterations);
            if (_stopRequested)
            {
                break;
            }
            if (work == 0)
            {
                Sleep();
            }
        }
        Shutdown();
    }

    private int DrainInbox()
    {
        int n = 0;
        while (n < InboxBatch && _inbox.TryDequeue(out var e))
        {
            n++;
            Guarded(static (loop, ev) => loop.Handle(ev), this, e);
        }
        if (n > 0)
        {
            Interlocked.Add(ref _eventsHandled, n);
        }
        return n;
    }

    private void Handle(in LinkEvent e)
    {
        var link = _links[(int)e.Port];
        switch (e.Kind)
        {
            case LinkEventKind.FrameReceived:
                var frame = e.Frame!;
                if (link is not null && frame.Length >= FrameLayout.HeaderSize
                    && MacAddress.Read(frame.Buffer.AsSpan(6)) != link.PeerMac
                    && FrameCodec.TryRead(frame.Span, Host.Torus, out _) == FrameError.None)
                {
                    link.LearnPeer(frame.Span);
                }
                Host.OnFrameReceived(e.Port, frame);
                break;
            case LinkEventKind.TransmitReady:
                link?.OnWritable();
                Host.OnTransmitReady(e.Port);
                break;
            case LinkEventKind.CarrierChanged:
                link?.ApplyCarrier(e.Up);
                Host.OnCarrierChanged(e.Port, e.Up);
                break;
        }
    }

    private int RunActions(int max)
    {
        int n = 0;
        while (n < max && _actions.TryDequeue(out var action))
        {
            n++;
            Guarded(static a => a(), action);
        }
        return n;
    }

    private int RunTimers()
    {
        if (_timers.Count == 0)
        {
            return 0;
        }
        long now = Now;
        int n = 0;
        while (n < TimerBatch && _timers.Count > 0 && _timers.NextDue <= now)
        {
            long id = _timers.Pop();
            n++;
            Guarded(static (loop, timer) => loop.Host.FireTimer(timer), this, id);
        }
        return n;
    }

    /// <summary>Sends every link's transmit ring; a ring that reopens lets the host refill it, a few rounds at most.</summary>
    private int FlushLinks()
    {
        int reopened = 0;
        for (int round = 0; round < FlushRounds; round++)
        {
            bool any = false;
            for (int p = 0; p < _links.Length; p++)
            {
                var link = _links[p];
                if (link is not null && link.Flush())
                {
                    any = true;
                    reopened++;
                    Guarded(static (loop, port) => loop.Host.OnTransmitReady(port), this, (Port)p);
                }
            }
            if (!any)
            {
                break;
            }
        }
        return reopened;
    }

    private void Sleep()
    {
        long waitNs = _timers.Count > 0 ? _timers.NextDue - Now : MaxSleepNs;
        if (waitNs <= 0)
        {
            return;
        }
        int ms = (int)((Math.Min(waitNs, MaxSleepNs) + 999_999) / 1_000_000);
        // Reset before announcing sleep: a producer sets the event only after it sees _sleeping, so no wake is lost.
        _signal.Reset();
        Interlocked.Exchange(ref _sleeping, 1);
        // Re-check after announcing sleep: a producer either sees _sleeping set or its event is seen here.
        if (!_inbox.IsEmpty || !_actions.IsEmpty || _stopRequested)
        {
            Volatile.Write(ref _sleeping, 0);
            return;
        }
        Interlocked.Increment(ref _sleeps);
        _signal.Wait(ms);
        Volatile.Write(ref _sleeping, 0);
    }

    private void Shutdown()
    {
        Guarded(static loop => loop.Host.Stop(), this);
        FlushLinks();
        RunActions(int.MaxValue);
        DrainInboxDiscarding();
    }

    private void DrainInboxDiscarding()
    {
        while (_inbox.TryDequeue(out var e))
        {
            e.Frame?.Release();
        }
    }

    private void RunLateActions()
    {
        // Actions posted while the node stopped still run (on the stopping or posting thread; the loop is gone, so
        // nothing runs concurrently with the host) so that no caller of InvokeAsync waits forever.
        while (_actions.TryDequeue(out var action))
        {
            Guarded(static a => a(), action);
        }
    }

    private void Guarded<TState>(Action<TState> action, TState state)
    {
        try
        {
            action(state);
        }
        // the server keeps running; the failure is logged and counted
        catch (Exception ex)
        {
            Interlocked.Increment(ref _faults);
            _log.Write(NodeLogCategories.EventLoop, Host.Self, LogLevel.Error, $"event loop: {ex}");
        }
    }

    private void Guarded<TState, TArg>(Action<TState, TArg> action, TState state, TArg arg)
    {
        try
        {
            action(state, arg);
        }
        // the server keeps running; the failure is logged and counted
        catch (Exception ex)
        {
            Interlocked.Increment(ref _faults);
            _log.Write(NodeLogCategories.EventLoop, Host.Self, LogLevel.Error, $"event loop: {ex}");
        }
    }
}

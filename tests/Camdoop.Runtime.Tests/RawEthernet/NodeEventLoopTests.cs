using System.Collections.Concurrent;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>The real-server event loop without links (no root needed).</summary>
[Collection(RawEthernetCollection.Name)]
public sealed class NodeEventLoopTests
{
    private static readonly Torus Torus = new(3, 3, 3);

    [Fact]
    public void TimersFireInDueOrderAndNeverEarly()
    {
        var service = new TimerService([30, 10, 20, 10, 0]);
        using var loop = StartLoop(service);

        Assert.True(service.Done.Wait(TimeSpan.FromSeconds(5)), "timers did not all fire");

        var fired = service.Fired.ToArray();
        Assert.Equal([4, 1, 3, 2, 0], fired.Select(f => f.Index).ToArray());
        foreach (var (index, setAt, firedAt, _) in fired)
        {
            long delay = service.Delays[index] * NodeOptions.Millisecond;
            Assert.True(firedAt - setAt >= delay, $"timer {index} fired after {(firedAt - setAt) / 1e6:F3} ms, before its {delay / 1e6} ms");
        }
        Assert.All(fired, f => Assert.Equal(service.LoopThread, f.Thread));
    }

    [Fact]
    public void CancelledTimersDoNotFire()
    {
        var service = new TimerService([20, 5, 10], cancel: 0);
        using var loop = StartLoop(service);

        Assert.True(service.Done.Wait(TimeSpan.FromSeconds(5)));
        Thread.Sleep(60); // well past the cancelled 20 ms timer

        Assert.Equal([1, 2], service.Fired.Select(f => f.Index).ToArray());
    }

    [Fact]
    public async Task InvokeRunsOnTheLoopThreadAndReturnsResultsAndExceptions()
    {
        var service = new TimerService([]);
        using var loop = StartLoop(service);

        int loopThread = await loop.InvokeAsync(() => Environment.CurrentManagedThreadId);
        var self = await loop.InvokeAsync(() => loop.Host.Self);
        var failure = await Assert.ThrowsAsync<InvalidOperationException>(() => loop.InvokeAsync<int>(() => throw new InvalidOperationException("boom")));

        Assert.NotEqual(Environment.CurrentManagedThreadId, loopThread);
        Assert.Equal(service.LoopThread, loopThread);
        Assert.Equal(new Coordinate(1, 2, 0), self);
        Assert.Equal("boom", failure.Message);
        Assert.Equal(0, loop.Faults);
    }

    [Fact]
    public async Task PostedActionsFromManyThreadsAllRunOnceOnTheLoopThread()
    {
        var service = new TimerService([]);
        using var loop = StartLoop(service);
        const int Threads = 4;
        const int PerThread = 5000;
        var seen = new int[Threads * PerThread];
        var threads = new ConcurrentBag<int>();
        int count = 0; // touched only on the loop thread

        Parallel.For(0, Threads, t =>
        {
            for (int i = 0; i < PerThread; i++)
            {
                int id = (t * PerThread) + i;
                loop.Post(() =>
                {
                    seen[id]++;
                    count++;
                    threads.Add(Environment.CurrentManagedThreadId);
                });
            }
        });
        int total = await loop.InvokeAsync(() => count);

        Assert.Equal(Threads * PerThread, total);
        Assert.All(seen, s => Assert.Equal(1, s));
        Assert.Equal([service.LoopThread], threads.Distinct().ToArray());
    }

    [Fact]
    public async Task StopStopsTheServicesAndLaterCallsFailInsteadOfHanging()
    {
        var service = new TimerService([]);
        var loop = StartLoop(service);
        await loop.InvokeAsync(() => 0);

        loop.Stop();
        loop.Stop(); // idempotent

        Assert.True(service.Stopped);
        Assert.True(loop.Host.IsHalted);
        Assert.False(loop.IsRunning);
        var late = loop.InvokeAsync(() => 1);
        Assert.True(late.IsFaulted);
        Assert.Throws<InvalidOperationException>(() => loop.Post(() => { }));
        loop.Dispose();
    }

    [Fact]
    public async Task ServiceFaultsAreLoggedWithATimestampAndTheLoopKeepsRunning()
    {
        var log = new LockedStringWriter();
        var service = new TimerService([1], throwInTimer: true);
        using var loop = StartLoop(service, new NodeLog(log));

        Assert.True(service.Done.Wait(TimeSpan.FromSeconds(5)));
        int after = await loop.InvokeAsync(() => 42);

        Assert.Equal(42, after);
        Assert.Equal(1, loop.Host.Counters.ServiceFaults);
        var line = log.ToString().Split('\n').First(l => l.Contains("timer callback failed", StringComparison.Ordinal));
        Assert.Matches(@"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z ERROR \(1,2,0\) ", line);
    }

    private static NodeEventLoop StartLoop(IService service, NodeLog? log = null)
    {
        var loop = new NodeEventLoop(driver => new NodeHost(new Coordinate(1, 2, 0), Torus, driver, new FramePool()), log);
        loop.Host.Register(service);
        loop.Start();
        return loop;
    }

    /// <summary>Sets timers with the given delays (ms) at start and records when and where each fired.</summary>
    private sealed class TimerService(int[] delays, int cancel = -1, bool throwInTimer = false) : IService
    {
        public int[] Delays => delays;

        public ConcurrentQueue<(int Index, long SetAt, long FiredAt, int Thread)> Fired { get; } = new();

        public ManualResetEventSlim Done { get; } = new();

        public int LoopThread { get; private set; }

        public bool Stopped { get; private set; }

        public byte Id => 77;

        public string Name => "timers";

        public void Start(INodeContext context)
        {
            LoopThread = Environment.CurrentManagedThreadId;
            long setAt = context.Now;
            int expected = delays.Length - (cancel >= 0 ? 1 : 0);
            if (expected == 0)
            {
                Done.Set();
            }
            var handles = new TimerHandle[delays.Length];
            for (int i = 0; i < delays.Length; i++)
            {
                int index = i;
                handles[i] = context.SetTimer(delays[i] * NodeOptions.Millisecond, () =>
                {
                    Fired.Enqueue((index, setAt, context.Now, Environment.CurrentManagedThreadId));
                    if (Fired.Count == expected)
                    {
                        Done.Set();
                    }
                    if (throwInTimer)
                    {
                        throw new InvalidOperationException("timer callback bug");
                    }
                });
            }
            if (cancel >= 0)
            {
                context.CancelTimer(handles[cancel]);
            }
        }

        public void OnFrame(in InboundFrame frame)
        {
        }

        public void Stop() => Stopped = true;
    }
}

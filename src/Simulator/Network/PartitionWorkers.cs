using System.Diagnostics;
using System.Runtime.ExceptionServices;

namespace Camdoop.Simulator.Network;

/// <summary>
/// The threads that run partitions in a window: the driving thread and <c>threads - 1</c> workers, then they meet.
/// Each thread owns a contiguous block of partitions (neighbouring servers: their frames, buffers and link state stay
/// in that core's caches from one window to the next) and runs its own first, the ones that took longest in the last
/// window first; a thread done with its own takes the others' not yet started, cheapest first, so that a busy region
/// (the servers around a reducer) does not leave the other threads idle. Each partition is claimed by one thread per
/// window. Windows are short (a link delay of virtual time, often a few hundred microseconds of work), so a thread
/// waiting for the others spins briefly before it blocks: waking a blocked thread costs more than most windows.
/// </summary>
internal sealed class PartitionWorkers : IDisposable
{
    // Spin this long before blocking.
    private static readonly long SpinTicks = Stopwatch.Frequency / 5_000; // 200 us

    private readonly SimulationPartition[] _partitions;
    private readonly int[][] _owned; // per thread, its partitions, kept longest-last-time first
    private readonly long[] _lastTicks;
    private readonly int[] _claims; // the window a partition was last claimed in
    private readonly Thread[] _threads;
    private readonly Exception?[] _errors;
    private readonly object _gate = new(); // Monitor.Wait needs an object's monitor, not a Lock
    private long _bound;
    private int _window;
    private int _generation;
    private int _running;
    private int _sleepers;
    private int _driverSleeping;
    private volatile bool _stopping;

    public PartitionWorkers(SimulationPartition[] partitions, int threads)
    {
        _partitions = partitions;
        _lastTicks = new long[partitions.Length];
        _claims = new int[partitions.Length];
        _errors = new Exception?[partitions.Length];
        int count = Math.Clamp(threads, 1, partitions.Length);
        _owned = new int[count][];
        for (int t = 0; t < count; t++)
        {
            int from = t * partitions.Length / count, to = (t + 1) * partitions.Length / count;
            _owned[t] = Enumerable.Range(from, to - from).ToArray();
        }
        _threads = new Thread[count - 1];
        for (int i = 0; i < _threads.Length; i++)
        {
            int slot = i + 1;
            _threads[i] = new Thread(() => Work(slot))
            {
                IsBackground = true,
                Name = $"sim worker {slot}",
            };
            _threads[i].Start();
        }
    }

    /// <summary>Windows run so far.</summary>
    public long Windows { get; private set; }

    /// <summary>Runs every partition up to (not including) <paramref name="bound"/> and waits for all of them.</summary>
    public void Run(long bound)
    {
        Windows++;
        Volatile.Write(ref _bound, bound);
        Volatile.Write(ref _window, _window + 1);
        Volatile.Write(ref _running, _threads.Length);
        Interlocked.Increment(ref _generation);
        if (Volatile.Read(ref _sleepers) > 0)
        {
            lock (_gate)
            {
                Monitor.PulseAll(_gate);
            }
        }
        RunPartitions(0, bound);
        WaitForWorkers();
        for (int i = 0; i < _errors.Length; i++)
        {
            var error = _errors[i];
            if (error is not null)
            {
                Array.Clear(_errors);
                ExceptionDispatchInfo.Capture(error).Throw();
            }
        }
    }

    public void Dispose()
    {
        _stopping = true;
        Interlocked.Increment(ref _generation);
        lock (_gate)
        {
            Monitor.PulseAll(_gate);
        }
        foreach (var thread in _threads)
        {
            thread.Join();
        }
    }

    /// <summary>Runs thread <paramref name="slot"/>'s own partitions, then whatever the others have not started.</summary>
    private void RunPartitions(int slot, long bound)
    {
        int window = Volatile.Read(ref _window);
        var own = _owned[slot];
        // Longest first (by the last window's time): a short one can fill the gap at the end. Insertion sort: the
        // order changes little from one window to the next. Only this thread reorders its list; a helper reading it
        // meanwhile may see an entry twice or miss one, which is harmless: this thread itself goes through all of them,
        // and the claims let each run once.
        for (int i = 1; i < own.Length; i++)
        {
            int p = own[i];
            int j = i - 1;
            while (j >= 0 && _lastTicks[own[j]] < _lastTicks[p])
            {
                own[j + 1] = own[j];
                j--;
            }
            own[j + 1] = p;
        }
        foreach (int p in own)
        {
            TryRun(p, window, bound);
        }
        // Help the others from the far end of their lists, where their cheapest partitions wait.
        for (int k = 1; k < _owned.Length; k++)
        {
            var other = _owned[(slot + k) % _owned.Length];
            for (int i = other.Length - 1; i >= 0; i--)
            {
                TryRun(other[i], window, bound);
            }
        }
    }

    private void TryRun(int p, int window, long bound)
    {
        int claimed = Volatile.Read(ref _claims[p]);
        if (claimed == window || Interlocked.CompareExchange(ref _claims[p], window, claimed) != claimed)
        {
            return; // another thread runs it in this window
        }
        long start = Stopwatch.GetTimestamp();
        try
        {
            _partitions[p].RunBefore(bound);
        }
        catch (Exception e)
        {
            _errors[p] = e;
        }
        _lastTicks[p] = Stopwatch.GetTimestamp() - start;
    }

    private void Work(int slot)
    {
        int seen = 0;
        while (true)
        {
            WaitForWindow(seen);
            seen = Volatile.Read(ref _generation);
            if (_stopping)
            {
                return;
            }
            RunPartitions(slot, Volatile.Read(ref _bound));
            if (Interlocked.Decrement(ref _running) == 0 && Volatile.Read(ref _driverSleeping) != 0)
            {
                lock (_gate)
                {
                    Monitor.PulseAll(_gate);
                }
            }
        }
    }

    /// <summary>The driving thread: until every worker has finished the window.</summary>
    private void WaitForWorkers() =>
        SpinThenBlockUntil(static (w, _) => Volatile.Read(ref w._running) == 0, 0, ref _driverSleeping);

    /// <summary>A worker: until the driving thread starts a window after <paramref name="seen"/> (or stops).</summary>
    private void WaitForWindow(int seen) =>
        SpinThenBlockUntil(static (w, window) => Volatile.Read(ref w._generation) != window, seen, ref _sleepers);

    /// <summary>
    /// Spins up to <see cref="SpinTicks"/>, then blocks on the gate, until <paramref name="done"/> holds.
    /// <paramref name="sleepers"/> counts the threads blocked, so that whoever makes it hold knows to pulse the gate.
    /// </summary>
    private void SpinThenBlockUntil(Func<PartitionWorkers, int, bool> done, int state, ref int sleepers)
    {
        long start = Stopwatch.GetTimestamp();
        var spin = new SpinWait();
        while (!done(this, state))
        {
            spin.SpinOnce(sleep1Threshold: -1);
            if (Stopwatch.GetTimestamp() - start > SpinTicks)
            {
                lock (_gate)
                {
                    Interlocked.Increment(ref sleepers);
                    while (!done(this, state))
                    {
                        // Timed: a pulse sent between the check and the wait is not lost for long.
                        Monitor.Wait(_gate, 1);
                    }
                    Interlocked.Decrement(ref sleepers);
                }
                return;
            }
        }
    }
}

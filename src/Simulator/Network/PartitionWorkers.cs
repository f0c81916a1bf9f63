using System.Diagnostics;
using System.Runtime.ExceptionServices;

namespace Camdoop.Simulator.Network;

/// <summary>
/// One thread per partition but the first (the driving thread runs that one), meeting at the end of every window.
/// Windows are short (a link delay of virtual time, often a few hundred microseconds of work), so a thread waiting
/// for the others spins briefly before it blocks: waking a blocked thread costs more than most windows.
/// </summary>
internal sealed class PartitionWorkers : IDisposable
{
    // Spin this long before blocking (Stopwatch ticks are computed at start).
    private static readonly long SpinTicks = Stopwatch.Frequency / 5_000; // 200 us

    private readonly SimulationPartition[] _partitions;
    private readonly Thread[] _threads;
    private readonly Exception?[] _errors;
    private readonly object _gate = new(); // Monitor.Wait needs an object's monitor, not a Lock
    private long _bound;
    private int _generation;
    private int _running;
    private int _sleepers;
    private int _driverSleeping;
    private volatile bool _stopping;

    public PartitionWorkers(SimulationPartition[] partitions)
    {
        _partitions = partitions;
        _errors = new Exception?[partitions.Length];
        _threads = new Thread[partitions.Length - 1];
        for (int i = 0; i < _threads.Length; i++)
        {
            int index = i + 1;
            _threads[i] = new Thread(() => Work(index))
            {
                IsBackground = true,
                Name = $"sim partition {index}",
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
        Volatile.Write(ref _running, _threads.Length);
        Interlocked.Increment(ref _generation);
        if (Volatile.Read(ref _sleepers) > 0)
        {
            lock (_gate)
            {
                Monitor.PulseAll(_gate);
            }
        }
        try
        {
            _partitions[0].RunBefore(bound);
        }
        catch (Exception e)
        {
            _errors[0] = e;
        }
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

    private void Work(int index)
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
            try
            {
                _partitions[index].RunBefore(Volatile.Read(ref _bound));
            }
            catch (Exception e)
            {
                _errors[index] = e;
            }
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
    private void WaitForWorkers()
    {
        long start = Stopwatch.GetTimestamp();
        var spin = new SpinWait();
        while (Volatile.Read(ref _running) != 0)
        {
            spin.SpinOnce(sleep1Threshold: -1);
            if (Stopwatch.GetTimestamp() - start > SpinTicks)
            {
                lock (_gate)
                {
                    Interlocked.Exchange(ref _driverSleeping, 1);
                    while (Volatile.Read(ref _running) != 0)
                    {
                        // Timed: a pulse sent between the check and the wait is not lost for long.
                        Monitor.Wait(_gate, 1);
                    }
                    Interlocked.Exchange(ref _driverSleeping, 0);
                }
                return;
            }
        }
    }

    /// <summary>A worker: until the driving thread starts a window after <paramref name="seen"/> (or stops).</summary>
    private void WaitForWindow(int seen)
    {
        long start = Stopwatch.GetTimestamp();
        var spin = new SpinWait();
        while (Volatile.Read(ref _generation) == seen)
        {
            spin.SpinOnce(sleep1Threshold: -1);
            if (Stopwatch.GetTimestamp() - start > SpinTicks)
            {
                lock (_gate)
                {
                    Interlocked.Increment(ref _sleepers);
                    while (Volatile.Read(ref _generation) == seen)
                    {
                        Monitor.Wait(_gate, 1);
                    }
                    Interlocked.Decrement(ref _sleepers);
                }
                return;
            }
        }
    }
}

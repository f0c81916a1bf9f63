using System.Diagnostics;
using System.Runtime.ExceptionServices;
using Camdoop.Runtime.Hosting;

namespace Camdoop.Simulator.Network;

/// <summary>
/// The threads that run partitions: the driving thread and <c>threads - 1</c> workers. <see cref="Run"/> takes every
/// partition from a common start to a common bound, with no barrier in between: each partition has a horizon (every
/// event before it processed, every frame it sent before it posted) and may run up to the smallest horizon of the
/// partitions with links into it plus the link delay, since no frame they send later can arrive before that
/// (conservative, per-neighbour rather than per-window synchronisation). So a thread done with its part of the cube
/// runs it further ahead instead of waiting for a busy region (the servers around a reducer) at every link delay;
/// global windows lost a sixth of the threads' time that way on 8x8x8. A partition runs on one thread at a time
/// (claimed with a flag); each thread takes its own block of partitions (neighbouring servers: their frames, buffers
/// and link state stay in that core's caches) first, then any other that can advance. The run is the same whatever the
/// threads do: a partition processes its events in (time, order), and every frame due before its bound is in its
/// queue before it runs.
/// </summary>
internal sealed class PartitionWorkers : IDisposable
{
    // Per-partition slots are a cache line apart (8 longs, or 16 ints): threads poll their neighbours' horizons.
    private const int Stride = 8;

    // Spin this long for the next Run before blocking.
    private static readonly long SpinTicks = Stopwatch.Frequency / 5_000; // 200 us

    // Within a run, spin this long for a neighbour's horizon before blocking: a thread that waits on a busy region
    // (the servers around a reducer) would otherwise burn its core for as long as that region takes, and on a loaded
    // machine take the core from the very thread it waits for.
    private static readonly long StallTicks = Stopwatch.Frequency / 50_000; // 20 us

    private readonly SimulationPartition[] _partitions;
    private readonly int[][] _inbound; // per partition: the partitions with a link into it
    private readonly long _lookahead;
    private readonly long[] _horizons; // per partition (padded): every event before it processed
    private readonly int[] _claims;    // per partition (padded): 1 while a thread runs it
    private readonly int[][] _owned;   // per thread, its partitions
    private readonly Thread[] _threads;
    private readonly object _gate = new(); // Monitor.Wait needs an object's monitor, not a Lock
    private Exception? _error;
    private Action<int>? _task; // set while ForEachPartition runs instead of a run to a bound
    private long _bound;
    private int _remaining; // partitions not at the bound yet
    private int _generation;
    private int _running;
    private int _sleepers;
    private int _driverSleeping;
    private int _stalled; // threads blocked in a run until a partition advances
    private volatile bool _stopping;
    private long _workerCpuNanoseconds;

    public PartitionWorkers(SimulationPartition[] partitions, int[][] inbound, long lookahead, int threads)
    {
        _partitions = partitions;
        _inbound = inbound;
        _lookahead = lookahead;
        _horizons = new long[partitions.Length * Stride];
        _claims = new int[partitions.Length * Stride * 2];
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

    /// <summary>Runs so far (each takes every partition from one common time to the next).</summary>
    public long Runs { get; private set; }

    /// <summary>
    /// CPU time of the worker threads (not the driving thread) up to the end of the last <see cref="Run"/>, waiting
    /// between runs included; 0 where thread CPU time is not available (<see cref="ThreadCpuClock"/>).
    /// </summary>
    public long WorkerCpuNanoseconds => Volatile.Read(ref _workerCpuNanoseconds);

    /// <summary>
    /// Runs every partition, all of them having processed every event before <paramref name="start"/>, up to (not
    /// including) <paramref name="bound"/>, and returns when all are there. Frames posted to a partition that
    /// reached the bound wait in its inbox.
    /// </summary>
    public void Run(long start, long bound)
    {
        Runs++;
        for (int p = 0; p < _partitions.Length; p++)
        {
            _horizons[p * Stride] = start;
        }
        Volatile.Write(ref _bound, bound);
        Volatile.Write(ref _remaining, _partitions.Length);
        StartWorkers();
        RunPartitions(0, bound);
        FinishWorkers();
    }

    /// <summary>
    /// Runs <paramref name="work"/> once for every partition, each thread its own block of partitions in order (the
    /// ones it then runs first), and returns when all are done; the first exception is rethrown here. For work that
    /// touches only the partition's own servers, done at one instant (every server starting a job).
    /// </summary>
    public void ForEachPartition(Action<int> work)
    {
        _task = work;
        StartWorkers();
        RunOwnTask(0, work);
        try
        {
            FinishWorkers();
        }
        finally
        {
            _task = null;
        }
    }

    /// <summary>The driving thread: clears the last error and sets the workers off on what the caller prepared.</summary>
    private void StartWorkers()
    {
        _error = null;
        Volatile.Write(ref _running, _threads.Length);
        Interlocked.Increment(ref _generation);
        if (Volatile.Read(ref _sleepers) > 0)
        {
            lock (_gate)
            {
                Monitor.PulseAll(_gate);
            }
        }
    }

    /// <summary>The driving thread: waits until every worker has left, then rethrows the first exception any thread met.</summary>
    private void FinishWorkers()
    {
        WaitForWorkers();
        var error = _error;
        if (error is not null)
        {
            _error = null;
            ExceptionDispatchInfo.Capture(error).Throw();
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

    /// <summary>Advances thread <paramref name="slot"/>'s own partitions, else any other, until all reach the bound.</summary>
    private void RunPartitions(int slot, long bound)
    {
        var own = _owned[slot];
        var spin = new SpinWait();
        long idleSince = 0;
        while (Volatile.Read(ref _remaining) > 0 && Volatile.Read(ref _error) is null)
        {
            bool advanced = false;
            foreach (int p in own)
            {
                advanced |= TryAdvance(p, bound);
            }
            if (!advanced)
            {
                for (int k = 1; k < _owned.Length && !advanced; k++)
                {
                    foreach (int p in _owned[(slot + k) % _owned.Length])
                    {
                        advanced |= TryAdvance(p, bound);
                    }
                }
            }
            if (advanced)
            {
                spin.Reset();
                idleSince = 0;
            }
            else if (idleSince == 0)
            {
                idleSince = Stopwatch.GetTimestamp();
            }
            else if (Stopwatch.GetTimestamp() - idleSince > StallTicks)
            {
                WaitForProgress(bound);
                spin.Reset();
                idleSince = 0;
            }
            else
            {
                // Every partition waits for a neighbour that another thread is running.
                spin.SpinOnce(sleep1Threshold: -1);
            }
        }
    }

    /// <summary>Blocks until a partition could advance, the run ends or a thread failed.</summary>
    private void WaitForProgress(long bound)
    {
        lock (_gate)
        {
            // Counted before looking (a full fence): a thread that advances after the look sees the count and pulses.
            Interlocked.Increment(ref _stalled);
            while (Volatile.Read(ref _remaining) > 0 && Volatile.Read(ref _error) is null && !AnyCanAdvance(bound))
            {
                // Timed: a pulse sent between the look and the wait is not lost for long.
                Monitor.Wait(_gate, 1);
            }
            Interlocked.Decrement(ref _stalled);
        }
    }

    /// <summary>Whether some partition, not claimed by a thread, may run further now.</summary>
    private bool AnyCanAdvance(long bound)
    {
        for (int p = 0; p < _partitions.Length; p++)
        {
            long from = Volatile.Read(ref _horizons[p * Stride]);
            if (from >= bound || Volatile.Read(ref _claims[p * Stride * 2]) != 0)
            {
                continue;
            }
            if (Limit(p, bound) > from)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>After a partition advanced (or a thread failed): wakes the threads blocked in <see cref="WaitForProgress"/>.</summary>
    private void WakeStalled()
    {
        // The horizon was published before this read; the fence keeps the read from passing it (see WaitForProgress).
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _stalled) != 0)
        {
            lock (_gate)
            {
                Monitor.PulseAll(_gate);
            }
        }
    }

    /// <summary>Runs <paramref name="work"/> for thread <paramref name="slot"/>'s own partitions, until one throws.</summary>
    private void RunOwnTask(int slot, Action<int> work)
    {
        foreach (int p in _owned[slot])
        {
            if (Volatile.Read(ref _error) is not null)
            {
                return;
            }
            try
            {
                work(p);
            }
            catch (Exception e)
            {
                Interlocked.CompareExchange(ref _error, e, null);
            }
        }
    }

    /// <summary>How far partition <paramref name="p"/> may run now: its inbound neighbours' smallest horizon plus the lookahead, at most <paramref name="bound"/>.</summary>
    private long Limit(int p, long bound)
    {
        long limit = bound;
        foreach (int q in _inbound[p])
        {
            limit = Math.Min(limit, Volatile.Read(ref _horizons[q * Stride]) + _lookahead);
        }
        return limit;
    }

    /// <summary>Runs partition <paramref name="p"/> as far as its neighbours' horizons allow, if no thread runs it.</summary>
    private bool TryAdvance(int p, long bound)
    {
        ref long horizon = ref _horizons[p * Stride];
        long from = Volatile.Read(ref horizon);
        if (from >= bound)
        {
            return false;
        }
        // Read the neighbours' horizons before taking the inbox: they post their frames before they publish.
        long limit = Limit(p, bound);
        if (limit <= from)
        {
            return false;
        }
        ref int claim = ref _claims[p * Stride * 2];
        if (Volatile.Read(ref claim) != 0 || Interlocked.CompareExchange(ref claim, 1, 0) != 0)
        {
            return false;
        }
        try
        {
            if (Volatile.Read(ref horizon) >= limit)
            {
                return false; // another thread took it this far meanwhile
            }
            var partition = _partitions[p];
            partition.TakeInbox();
            partition.RunBefore(limit);
            partition.PostOutbound();
            Volatile.Write(ref horizon, limit);
            if (limit == bound)
            {
                Interlocked.Decrement(ref _remaining);
            }
            return true;
        }
        catch (Exception e)
        {
            Interlocked.CompareExchange(ref _error, e, null);
            return false;
        }
        finally
        {
            Volatile.Write(ref claim, 0);
            WakeStalled();
        }
    }

    private void Work(int slot)
    {
        int seen = 0;
        long cpu = ThreadCpuClock.Nanoseconds();
        while (true)
        {
            WaitForRun(seen);
            seen = Volatile.Read(ref _generation);
            if (_stopping)
            {
                return;
            }
            if (Volatile.Read(ref _task) is { } task)
            {
                RunOwnTask(slot, task);
            }
            else
            {
                RunPartitions(slot, Volatile.Read(ref _bound));
            }
            // Counted before leaving the run, so the driver sees it once Run returns.
            long now = ThreadCpuClock.Nanoseconds();
            Interlocked.Add(ref _workerCpuNanoseconds, now - cpu);
            cpu = now;
            if (Interlocked.Decrement(ref _running) == 0 && Volatile.Read(ref _driverSleeping) != 0)
            {
                lock (_gate)
                {
                    Monitor.PulseAll(_gate);
                }
            }
        }
    }

    /// <summary>The driving thread: until every worker has left the run.</summary>
    private void WaitForWorkers() =>
        SpinThenBlockUntil(static (w, _) => Volatile.Read(ref w._running) == 0, 0, ref _driverSleeping);

    /// <summary>A worker: until the driving thread starts a run after <paramref name="seen"/> (or stops).</summary>
    private void WaitForRun(int seen) =>
        SpinThenBlockUntil(static (w, generation) => Volatile.Read(ref w._generation) != generation, seen, ref _sleepers);

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

using System.Globalization;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

/// <summary>
/// The bytes a whole front-end may hold for its clients at once, whatever the connection: the chunk buffers of
/// uploads in progress and the chunks being read for downloads. The per-connection limit alone would let every
/// connection hold its share at the same time (64 connections of 256 MiB); this bounds the sum. Thread-safe.
/// Reservations are granted in the order they were asked: one waiting for a large chunk is not passed over for ever
/// by smaller ones, and a reservation that cannot be granted within <see cref="Wait"/> is refused with one line.
/// </summary>
public sealed class FrontEndMemoryBudget
{
    private readonly Lock _lock = new();
    private readonly LinkedList<Waiter> _waiters = new();
    private long _held;
    private long _peak;
    private long _refusals;

    /// <param name="limit">The most bytes held at once.</param>
    /// <param name="wait">How long a reservation waits for room before it is refused.</param>
    public FrontEndMemoryBudget(long limit, TimeSpan wait)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        ArgumentOutOfRangeException.ThrowIfLessThan(wait, TimeSpan.Zero);
        Limit = limit;
        Wait = wait;
    }

    /// <summary>A budget that never refuses (sessions created without one).</summary>
    public static FrontEndMemoryBudget Unlimited() => new(long.MaxValue, TimeSpan.Zero);

    public long Limit { get; }

    public TimeSpan Wait { get; }

    /// <summary>Bytes held now.</summary>
    public long Held
    {
        get
        {
            lock (_lock)
            {
                return _held;
            }
        }
    }

    /// <summary>The most bytes ever held at once.</summary>
    public long Peak
    {
        get
        {
            lock (_lock)
            {
                return _peak;
            }
        }
    }

    /// <summary>Reservations refused: no room within <see cref="Wait"/>, or larger than the whole budget.</summary>
    public long Refusals => Interlocked.Read(ref _refusals);

    /// <summary>Reservations waiting for room now.</summary>
    public int Waiting
    {
        get
        {
            lock (_lock)
            {
                return _waiters.Count;
            }
        }
    }

    /// <summary>
    /// Takes <paramref name="bytes"/> at once if they fit and nobody is waiting before them; false otherwise (not a
    /// refusal: the caller may wait with <see cref="ReserveAsync"/>). Never blocks, so it may run on the event loop.
    /// </summary>
    public bool TryReserve(long bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        lock (_lock)
        {
            if (_waiters.Count > 0 || bytes > Limit - _held)
            {
                return false;
            }
            TakeLocked(bytes);
            return true;
        }
    }

    /// <summary>
    /// Takes <paramref name="bytes"/>, waiting up to <see cref="Wait"/> for room behind the reservations asked
    /// before. Throws <see cref="FrontEndException"/> with the one-line refusal when there is no room in time or the
    /// bytes are more than the whole budget; completes at once, allocating nothing, when they fit now.
    /// </summary>
    public ValueTask ReserveAsync(long bytes, CancellationToken cancellation)
    {
        if (TryReserve(bytes))
        {
            return ValueTask.CompletedTask;
        }
        if (bytes > Limit)
        {
            Interlocked.Increment(ref _refusals);
            throw new FrontEndException(string.Create(CultureInfo.InvariantCulture,
                $"{bytes} bytes are more than the front-end holds for all its clients at once ({Limit} bytes)"));
        }
        return new ValueTask(WaitForRoomAsync(bytes, cancellation));
    }

    /// <summary>Gives back bytes taken; waiting reservations that now fit are granted, oldest first.</summary>
    public void Release(long bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        if (bytes == 0)
        {
            return;
        }
        List<Waiter>? granted = null;
        lock (_lock)
        {
            if (bytes > _held)
            {
                throw new InvalidOperationException($"released {bytes} bytes, but only {_held} are held");
            }
            _held -= bytes;
            GrantLocked(ref granted);
        }
        Complete(granted);
    }

    /// <summary>Counts a refusal for want of room and makes the one line the client reads.</summary>
    public FrontEndException Refuse() => Refuse(Held);

    private FrontEndException Refuse(long held)
    {
        Interlocked.Increment(ref _refusals);
        return new FrontEndException(string.Create(CultureInfo.InvariantCulture,
            $"the front-end is holding {held} bytes for its clients, at its limit of {Limit}; try again later"));
    }

    private async Task WaitForRoomAsync(long bytes, CancellationToken cancellation)
    {
        var waiter = new Waiter(bytes);
        List<Waiter>? granted = null;
        lock (_lock)
        {
            if (_waiters.Count == 0 && bytes <= Limit - _held)
            {
                // Room appeared since TryReserve.
                TakeLocked(bytes);
                return;
            }
            waiter.Node = _waiters.AddLast(waiter);
        }
        try
        {
            await waiter.Granted.Task.WaitAsync(Wait, cancellation).ConfigureAwait(false);
            return;
        }
        catch (Exception e) when (e is TimeoutException or OperationCanceledException)
        {
            long held;
            lock (_lock)
            {
                if (waiter.Node.List is null)
                {
                    // Granted as the wait ended: the bytes are taken, so the reservation stands (or goes back
                    // below, when it was cancelled).
                    held = -1;
                }
                else
                {
                    bool first = _waiters.First == waiter.Node;
                    _waiters.Remove(waiter.Node);
                    if (first)
                    {
                        // It may have held back smaller reservations that fit.
                        GrantLocked(ref granted);
                    }
                    held = _held;
                }
            }
            Complete(granted);
            if (held < 0)
            {
                if (e is OperationCanceledException)
                {
                    Release(bytes);
                    throw;
                }
                return;
            }
            if (e is OperationCanceledException)
            {
                throw;
            }
            throw Refuse(held);
        }
    }

    private void TakeLocked(long bytes)
    {
        _held += bytes;
        _peak = Math.Max(_peak, _held);
    }

    private void GrantLocked(ref List<Waiter>? granted)
    {
        while (_waiters.First is { } first && first.Value.Bytes <= Limit - _held)
        {
            _waiters.RemoveFirst();
            TakeLocked(first.Value.Bytes);
            (granted ??= []).Add(first.Value);
        }
    }

    /// <summary>Wakes the granted waiters outside the lock (their continuations run elsewhere).</summary>
    private static void Complete(List<Waiter>? granted)
    {
        if (granted is null)
        {
            return;
        }
        foreach (var waiter in granted)
        {
            waiter.Granted.TrySetResult();
        }
    }

    private sealed class Waiter(long bytes)
    {
        public long Bytes { get; } = bytes;

        public TaskCompletionSource Granted { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public LinkedListNode<Waiter> Node { get; set; } = null!;
    }
}

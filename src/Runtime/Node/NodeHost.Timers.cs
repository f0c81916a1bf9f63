using Camdoop.Runtime.Logging;

namespace Camdoop.Runtime.Node;

// Timers: a slab of callbacks with generation numbers, so a cancelled or stale timer firing is ignored cheaply.
public sealed partial class NodeHost
{
    private Action?[] _timerCallbacks = new Action?[64];
    private uint[] _timerGeneration = new uint[64];
    private int[] _freeSlots = new int[64];
    private int _freeCount;
    private int _slotsUsed;

    public TimerHandle SetTimer(long delayNs, Action callback)
    {
        ArgumentNullException.ThrowIfNull(callback);
        if (delayNs < 0)
        {
            delayNs = 0;
        }
        int slot = TakeSlot();
        _timerCallbacks[slot] = callback;
        uint generation = ++_timerGeneration[slot];
        long id = ((long)generation << 32) | (uint)(slot + 1);
        _driver.ScheduleTimer(this, Now + delayNs, id);
        return new TimerHandle(id);
    }

    public void CancelTimer(TimerHandle timer)
    {
        if (!timer.IsSet || !TryResolve(timer.Id, out int slot))
        {
            return;
        }
        ReleaseSlot(slot);
    }

    /// <summary>Called by the driver when a timer falls due.</summary>
    public void FireTimer(long timerId)
    {
        if (_halted || !TryResolve(timerId, out int slot))
        {
            return;
        }
        var callback = _timerCallbacks[slot]!;
        ReleaseSlot(slot);
        if (!_options.IsolateServiceFaults)
        {
            callback();
            return;
        }
        try
        {
            callback();
        }
        // a service's bug must not take the server down
        catch (Exception ex)
        {
            Counters.ServiceFaults++;
            Log(LogLevel.Error, $"timer callback failed: {ex}");
        }
    }

    /// <summary>Timers scheduled and not yet fired or cancelled.</summary>
    public int PendingTimers => _slotsUsed - _freeCount;

    private bool TryResolve(long id, out int slot)
    {
        slot = (int)(uint)id - 1;
        uint generation = (uint)(id >> 32);
        return (uint)slot < (uint)_slotsUsed && _timerGeneration[slot] == generation && _timerCallbacks[slot] is not null;
    }

    private int TakeSlot()
    {
        if (_freeCount > 0)
        {
            return _freeSlots[--_freeCount];
        }
        if (_slotsUsed == _timerCallbacks.Length)
        {
            Array.Resize(ref _timerCallbacks, _slotsUsed * 2);
            Array.Resize(ref _timerGeneration, _slotsUsed * 2);
            Array.Resize(ref _freeSlots, _slotsUsed * 2);
        }
        return _slotsUsed++;
    }

    private void ReleaseSlot(int slot)
    {
        _timerCallbacks[slot] = null;
        _timerGeneration[slot]++;
        _freeSlots[_freeCount++] = slot;
    }
}

namespace Camdoop.Simulator.Energy;

/// <summary>
/// One link direction's transmitter under 802.3az: when each frame may start, and how long it spent in low-power
/// idle (LPI). It goes to sleep as soon as a frame ends with nothing behind it (T_s at full power), sleeps in LPI, and
/// wakes (T_w at full power) when the next frame is ready: a frame that finds it asleep waits T_w, and one that comes
/// while it is still going to sleep waits for the sleep to finish, then T_w. With coalescing, a frame that finds the
/// link asleep waits up to the hold time, or until enough frames wait, before the link wakes. A link starts the run
/// asleep. Every update is O(1) and allocates nothing.
/// </summary>
public sealed class EeeTransmitter
{
    private readonly long _wake;
    private readonly long _sleep;
    private readonly long _hold;
    private readonly int _trigger;
    private long _lastEnd = -1;
    private long _sleepDone;
    private long _lowPower;
    private long _wakeAt;
    private bool _idle = true;
    private bool _holding;

    public EeeTransmitter(long wakeTime, long sleepTime, long holdTime = 0, int packetTrigger = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(wakeTime);
        ArgumentOutOfRangeException.ThrowIfNegative(sleepTime);
        ArgumentOutOfRangeException.ThrowIfNegative(holdTime);
        _wake = wakeTime;
        _sleep = sleepTime;
        _hold = holdTime;
        _trigger = packetTrigger;
    }

    /// <summary>Times the link woke up.</summary>
    public long Wakes { get; private set; }

    /// <summary>
    /// A frame is ready to be serialised at <paramref name="ready"/> and nothing else is being sent; <paramref name="waiting"/>
    /// frames wait (this one included) and <paramref name="capacity"/> fit in the queue. Returns when it starts: at once
    /// right after the previous frame (the link never slept), else after the wake-up (and the hold, when coalescing).
    /// </summary>
    public long StartAfterIdle(long ready, int waiting, int capacity)
    {
        _idle = false;
        if (ready <= _lastEnd)
        {
            return ready;
        }
        long wakeAt = Math.Max(ready, _sleepDone);
        _holding = _hold > 0 && waiting < Math.Min(_trigger, capacity);
        if (_holding)
        {
            wakeAt = Math.Max(ready + _hold, _sleepDone);
        }
        _lowPower += wakeAt - _sleepDone;
        _wakeAt = wakeAt;
        Wakes++;
        return wakeAt + _wake;
    }

    /// <summary>
    /// With coalescing, a frame joined the queue at <paramref name="now"/> and <paramref name="waiting"/> now wait: if
    /// that reaches the trigger (or fills the queue) while the link is held asleep, it wakes now and the head starts at
    /// the time returned; otherwise -1 (the head's start stands).
    /// </summary>
    public long OnQueued(long now, int waiting, int capacity)
    {
        if (!_holding || waiting < Math.Min(_trigger, capacity))
        {
            return -1;
        }
        _holding = false;
        long wakeAt = Math.Max(now, _sleepDone);
        if (wakeAt >= _wakeAt)
        {
            return -1;
        }
        _lowPower -= _wakeAt - wakeAt;
        _wakeAt = wakeAt;
        return wakeAt + _wake;
    }

    /// <summary>A frame finished serialising at <paramref name="now"/>: unless another follows at once, the link goes to sleep.</summary>
    public void Ended(long now)
    {
        _lastEnd = now;
        _sleepDone = now + _sleep;
        _idle = true;
        _holding = false;
    }

    /// <summary>Everything queued was lost at <paramref name="now"/> (the link or its sender failed): the link goes back to sleep.</summary>
    public void Abandon(long now)
    {
        if (_idle)
        {
            return;
        }
        if (_wakeAt > now)
        {
            // Still asleep (or held): it stays so, and its LPI runs on from where it was.
            _lowPower -= _wakeAt - Math.Max(now, _sleepDone);
            _lastEnd = now;
            _sleepDone = Math.Max(now, _sleepDone);
            _idle = true;
            _holding = false;
            return;
        }
        Ended(now);
    }

    /// <summary>Nanoseconds spent in low-power idle from 0 to <paramref name="end"/> (no earlier than the last event the link saw).</summary>
    public long LowPowerTime(long end)
    {
        if (_idle)
        {
            return _lowPower + Math.Max(0, end - _sleepDone);
        }
        // Waking or sending: the LPI counted up to the pending wake-up may run past the end.
        return _lowPower - Math.Max(0, _wakeAt - Math.Max(end, _sleepDone));
    }
}

namespace Camdoop.Simulator.Events;

/// <summary>Scheduled callbacks, held by slot so that events stay reference-free. Slots are reused.</summary>
public sealed class ActionTable
{
    private Action?[] _actions = new Action?[16];
    private int[] _free = new int[16];
    private int _freeCount;
    private int _used;

    public int Pending => _used - _freeCount;

    public int Add(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        int slot;
        if (_freeCount > 0)
        {
            slot = _free[--_freeCount];
        }
        else
        {
            if (_used == _actions.Length)
            {
                Array.Resize(ref _actions, _used * 2);
                Array.Resize(ref _free, _used * 2);
            }
            slot = _used++;
        }
        _actions[slot] = action;
        return slot;
    }

    /// <summary>Removes and returns the action in <paramref name="slot"/>.</summary>
    public Action Take(int slot)
    {
        var action = _actions[slot] ?? throw new InvalidOperationException($"no action in slot {slot}");
        _actions[slot] = null;
        _free[_freeCount++] = slot;
        return action;
    }

    public void Clear()
    {
        Array.Clear(_actions);
        _freeCount = 0;
        _used = 0;
    }
}

namespace Camdoop.Runtime.Node;

/// <summary>Identifies a scheduled timer so that it can be cancelled. Default is "no timer".</summary>
public readonly record struct TimerHandle(long Id)
{
    public bool IsSet => Id != 0;
}

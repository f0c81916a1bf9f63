namespace Camdoop.MapReduce.Tests.Support;

/// <summary>A test that needs root (it mounts a small tmpfs). CI runs as root, so there it always runs.</summary>
public sealed class RootFactAttribute : FactAttribute
{
    public RootFactAttribute()
    {
        if (!Environment.IsPrivilegedProcess)
        {
            Skip = "needs root to mount a tmpfs";
        }
    }
}

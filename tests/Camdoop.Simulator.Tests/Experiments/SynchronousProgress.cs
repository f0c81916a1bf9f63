namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>Reports on the caller's thread, one at a time (Progress&lt;T&gt; would post to the thread pool).</summary>
internal sealed class SynchronousProgress<T>(Action<T> report) : IProgress<T>
{
    private readonly Lock _lock = new();

    public void Report(T value)
    {
        lock (_lock)
        {
            report(value);
        }
    }
}

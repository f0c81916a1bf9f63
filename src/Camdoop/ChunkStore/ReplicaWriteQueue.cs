using Camdoop.KeyRouting;
using Camdoop.Runtime.Node;

namespace Camdoop.ChunkStore;

/// <summary>
/// Runs the blocking file work of replica writes (fsyncs, renames) off the event loop, and its continuation back on
/// the loop. Writes of one chunk id run one after another, so that two commits of the same chunk (a store and a
/// repair) never interleave their renames; writes of different chunks run side by side.
/// </summary>
internal sealed class ReplicaWriteQueue(INodeContext context)
{
    private readonly Dictionary<Key, Queue<(Action Work, Action Then)>> _running = [];

    /// <summary>Chunks with a write in progress.</summary>
    public int Running => _running.Count;

    /// <summary><paramref name="work"/> must not throw; <paramref name="then"/> runs on the loop after it.</summary>
    public void Run(Key chunk, Action work, Action then)
    {
        if (_running.TryGetValue(chunk, out var waiting))
        {
            waiting.Enqueue((work, then));
            return;
        }
        _running[chunk] = new Queue<(Action, Action)>();
        Start(chunk, work, then);
    }

    private void Start(Key chunk, Action work, Action then) => context.RunOffLoop(work, () =>
    {
        try
        {
            then();
        }
        finally
        {
            var waiting = _running[chunk];
            if (waiting.Count == 0)
            {
                _running.Remove(chunk);
            }
            else
            {
                var (nextWork, nextThen) = waiting.Dequeue();
                Start(chunk, nextWork, nextThen);
            }
        }
    });
}

namespace Camdoop.MapReduce.Service;

// Releasing: a job dropped from this server (it ended everywhere, or an operator killed it while it ran) gives every
// shuffle buffer it holds back to the server's pool, so that the jobs still running here can use them.
public sealed partial class ServerJob
{
    /// <summary>Set once the job has given back its buffers; nothing of it runs afterwards.</summary>
    public bool Released { get; private set; }

    /// <summary>
    /// Stops the job here for good and returns what it rented from the buffer pool: send buffers of its streams,
    /// children's stashes, its mergers' input buffers (those in use and those kept for reuse); closes its reducers'
    /// output files and its map tasks run again. Marking it failed first makes its timers and late callbacks no-ops.
    /// </summary>
    internal void Release()
    {
        if (Released)
        {
            return;
        }
        Released = true;
        if (Failure is null)
        {
            Fail("the job was dropped on this server");
        }
        foreach (var vertex in Vertices.ToList())
        {
            ReleaseVertex(vertex);
            vertex.Output.Discard();
        }
        foreach (var root in _roots.Values)
        {
            ReleaseVertex(root);
            root.Output.Dispose();
        }
        _reruns.Release();
        ReleaseReplicas();
        foreach (var pool in _mergers.Values)
        {
            while (pool.TryPop(out var merger))
            {
                merger.ReleaseBuffers();
            }
        }
        _mergers.Clear();
    }

    /// <summary>The vertex's merger goes back to the job's pool (released above), its children's stashes to the buffer pool.</summary>
    private void ReleaseVertex(VertexBase vertex)
    {
        vertex.Discard();
        foreach (var child in vertex.Children)
        {
            child.ReleaseStash(Transport.Buffers);
        }
    }
}

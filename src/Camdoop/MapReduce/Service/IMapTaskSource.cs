using Camdoop.KeyRouting;
using Camdoop.MapReduce.MapPhase;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// What a server running a job needs to know of its map tasks to recover from failures (the Camdoop paper, §4.2):
/// which map tasks each server ran (their ids, which are the ids of their input chunks), and how to run one again
/// here when its server failed and its id now maps to this server. The simulator maps the same input again; a node
/// reads a replica of the chunk.
/// </summary>
public interface IMapTaskSource
{
    /// <summary>The ids of the map tasks <paramref name="server"/> ran, in the order every server agrees on.</summary>
    IReadOnlyList<Key> MapTasksOf(Coordinate server);

    /// <summary>
    /// Runs map task <paramref name="mapTask"/> (first run on <paramref name="server"/>) again here, and calls
    /// <paramref name="done"/> on the event loop with its output, or with null and the reason it could not.
    /// </summary>
    void Rerun(Key mapTask, Coordinate server, Action<MapOutput?, string?> done);
}

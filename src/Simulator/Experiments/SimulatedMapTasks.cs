using Camdoop.KeyRouting;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>
/// The simulated cube's map tasks: one per server that maps the job (every server, or the job's own), named like the
/// input file it maps; one run again after a failure maps the same input once more (outside virtual time, like the map
/// phase itself).
/// </summary>
internal sealed class SimulatedMapTasks : IMapTaskSource
{
    private readonly Torus _torus;
    private readonly JobSimulationInput _input;
    private readonly Key[][] _ids;

    public SimulatedMapTasks(Torus torus, JobSimulationInput input, IReadOnlyList<int>? mapServers = null)
    {
        _torus = torus;
        _input = input;
        _ids = new Key[torus.Count][];
        for (int s = 0; s < torus.Count; s++)
        {
            _ids[s] = mapServers is null || mapServers.Contains(s) ? [JobPlacement.MapTaskId(torus, torus.CoordinateOf(s), DatasetGenerator.FileName(s))] : [];
        }
    }

    /// <summary>Whether <paramref name="server"/> runs a map task of the job.</summary>
    public bool Maps(int server) => _ids[server].Length > 0;

    public IReadOnlyList<Key> MapTasksOf(Coordinate server) => _ids[_torus.IndexOf(server)];

    public void Rerun(Key mapTask, Coordinate server, Action<MapOutput?, string?> done)
    {
        ArgumentNullException.ThrowIfNull(done);
        done(_input.Remap(_torus.IndexOf(server)), null);
    }
}

using System.Collections;
using Camdoop.Runtime.Topology;

namespace Camdoop.Hosting.Logging;

/// <summary>
/// The server a node process runs, as the outermost scope of every event it logs: the JSON formatter writes it as
/// {"Message":"server 0,0,0","Server":"0,0,0"} in "Scopes", the text formatter as (0,0,0).
/// </summary>
internal sealed class ServerScope(Coordinate server) : IReadOnlyList<KeyValuePair<string, object?>>
{
    public Coordinate Server { get; } = server;

    /// <summary>The coordinate as "x,y,z", as configs and the CLI write it.</summary>
    public string Name { get; } = server.Name;

    public int Count => 1;

    public KeyValuePair<string, object?> this[int index] =>
        index == 0 ? new("Server", Name) : throw new ArgumentOutOfRangeException(nameof(index));

    public IEnumerator<KeyValuePair<string, object?>> GetEnumerator()
    {
        yield return this[0];
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    public override string ToString() => $"server {Name}";
}

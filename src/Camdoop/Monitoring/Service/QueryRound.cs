using Camdoop.Monitoring.Tables;

namespace Camdoop.Monitoring.Service;

/// <summary>
/// One round of a query, as the asking server finished it: the result rows (in the query's select order), how many
/// servers contributed, when the round started and when its last result arrived (node clock, nanoseconds).
/// </summary>
public sealed record QueryRound(long Round, IReadOnlyList<string> Columns, IReadOnlyList<QueryValue[]> Rows, int Servers, int ServersInCube, long StartedAt, long CompletedAt)
{
    public long LatencyNs => CompletedAt - StartedAt;

    public bool IsComplete => Servers == ServersInCube;
}

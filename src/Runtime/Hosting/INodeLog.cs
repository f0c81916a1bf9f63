using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Hosting;

/// <summary>
/// Where a real server's event loop writes what its services, links and the loop itself log. The runtime knows no
/// logging library (the simulator and the job API build on it): a node process bridges this to
/// Microsoft.Extensions.Logging, a test or the link probe to a <see cref="NodeLog"/> on a writer.
/// </summary>
public interface INodeLog
{
    /// <summary>
    /// Writes one event of <paramref name="category"/> (one of <see cref="NodeLogCategories"/>) about
    /// <paramref name="node"/>, or drops it when <paramref name="level"/> is below the log's level.
    /// </summary>
    void Write(string category, Coordinate? node, LogLevel level, string message);

    void Flush();
}

/// <summary>The categories the runtime logs under: which part of a server an event comes from.</summary>
public static class NodeLogCategories
{
    /// <summary>What services log through the host (<c>INodeContext.Log</c>).</summary>
    public const string Services = "Camdoop.Services";

    /// <summary>The raw-Ethernet links and their I/O threads.</summary>
    public const string Links = "Camdoop.Runtime.Links";

    /// <summary>Faults the event loop survived.</summary>
    public const string EventLoop = "Camdoop.Runtime.EventLoop";
}

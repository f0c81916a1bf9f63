namespace Camdoop.Hosting.Logging;

/// <summary>
/// The categories a node process logs under beside the runtime's (<c>Camdoop.Runtime.Hosting.NodeLogCategories</c>).
/// </summary>
public static class NodeProcessLogCategories
{
    /// <summary>The node's life: start, stop, status file, credentials.</summary>
    public const string Node = "Camdoop.Node";

    public const string FrontEnd = "Camdoop.FrontEnd";

    public const string Web = "Camdoop.Web";
}

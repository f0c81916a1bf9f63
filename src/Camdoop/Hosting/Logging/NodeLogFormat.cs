namespace Camdoop.Hosting.Logging;

/// <summary>How the node log writes an event: the config's 'logFormat'.</summary>
public enum NodeLogFormat
{
    /// <summary>One human line: UTC time, level, server, message (<see cref="NodeTextFormatter"/>).</summary>
    Text,

    /// <summary>One JSON object a line for log shippers: the library's own "json" console formatter.</summary>
    Json,
}

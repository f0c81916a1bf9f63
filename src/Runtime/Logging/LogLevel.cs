namespace Camdoop.Runtime.Logging;

/// <summary>
/// How much a log line matters. It has a namespace of its own because the node host and the link drivers both log
/// and neither should depend on the other for it.
/// </summary>
public enum LogLevel : byte
{
    Debug,
    Info,
    Warning,
    Error,
}

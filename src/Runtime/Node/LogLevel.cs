namespace Camdoop.Runtime.Node;

public enum LogLevel : byte
{
    Debug,
    Info,
    Warning,
    Error,
}

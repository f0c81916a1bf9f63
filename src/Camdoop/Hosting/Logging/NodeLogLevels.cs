using MicrosoftLogLevel = Microsoft.Extensions.Logging.LogLevel;
using RuntimeLogLevel = Camdoop.Runtime.Logging.LogLevel;

namespace Camdoop.Hosting.Logging;

/// <summary>
/// Between the runtime's four levels and Microsoft.Extensions.Logging's seven, in one place. The runtime keeps its own
/// enum so that it, the simulator and the job API need no logging package.
/// </summary>
public static class NodeLogLevels
{
    public static MicrosoftLogLevel ToMicrosoft(RuntimeLogLevel level) => level switch
    {
        RuntimeLogLevel.Debug => MicrosoftLogLevel.Debug,
        RuntimeLogLevel.Info => MicrosoftLogLevel.Information,
        RuntimeLogLevel.Warning => MicrosoftLogLevel.Warning,
        _ => MicrosoftLogLevel.Error,
    };

    public static RuntimeLogLevel FromMicrosoft(MicrosoftLogLevel level) => level switch
    {
        MicrosoftLogLevel.Trace or MicrosoftLogLevel.Debug => RuntimeLogLevel.Debug,
        MicrosoftLogLevel.Information => RuntimeLogLevel.Info,
        MicrosoftLogLevel.Warning => RuntimeLogLevel.Warning,
        _ => RuntimeLogLevel.Error,
    };
}

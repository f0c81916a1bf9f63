namespace Camdoop.Cli.CommandLine;

/// <summary>A user-facing error: printed as one line, exit code 2 for usage errors and 1 otherwise.</summary>
public sealed class CliException : Exception
{
    public CliException(string message, int exitCode = 1)
        : base(message)
    {
        ExitCode = exitCode;
    }

    public CliException()
    {
    }

    public CliException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    public int ExitCode { get; } = 1;

    public static CliException Usage(string message) => new(message, 2);
}

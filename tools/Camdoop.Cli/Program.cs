using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Commands;

namespace Camdoop.Cli;

public static class Program
{
    public static int Main(string[] args)
    {
        try
        {
            return RootCommand.Create().Invoke(args, Console.Out);
        }
        catch (CliException ex)
        {
            Console.Error.WriteLine(ex.Message.StartsWith("camdoop", StringComparison.Ordinal) ? ex.Message : $"camdoop: {ex.Message}");
            return ex.ExitCode;
        }
        catch (IOException ex)
        {
            Console.Error.WriteLine($"camdoop: {ex.Message}");
            return 1;
        }
        catch (UnauthorizedAccessException ex)
        {
            Console.Error.WriteLine($"camdoop: {ex.Message}");
            return 1;
        }
    }
}

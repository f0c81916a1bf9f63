namespace Camdoop.Cli;

public static class Program
{
    public static int Main(string[] args)
    {
        Console.WriteLine("camdoop: commands are being built; see README.md");
        return args.Length == 0 ? 0 : 2;
    }
}

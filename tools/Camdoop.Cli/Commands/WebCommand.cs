using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Auth;
using Camdoop.FrontEnd.Web;
using Camdoop.FrontEnd.Wire;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop web`: where a front-end's live web view is and how to log in to it (docs/monitoring.md#the-live-web-view).</summary>
public static class WebCommand
{
    public static Command Create() =>
        new Command("web", "Print the URL of the live web view and the token to log in with.")
        {
            Details = "For a testbed on this machine (--prefix) it takes the view of server 0,0,0 (or --server) and the\n" +
                      "testbed's key; for any other cube give --url and --key-file. The token is derived from the cluster\n" +
                      "key (HMAC-SHA256) and opens the web view only: paste it into the login form, or open the printed\n" +
                      "link, which logs in at once.",
        }
            .Option("prefix", "The testbed's namespace prefix", "NAME", TestbedState.DefaultPrefix)
            .Option("server", "The server whose web view to open (testbed)", "X,Y,Z")
            .Option("url", "A web view's URL, for a cube that is not a testbed on this machine", "URL")
            .Option("key-file", "Cluster key file (default: $CAMDOOP_KEY_FILE, else the testbed's)", "FILE")
            .Flag("json", "Print url, token and link as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string url;
        string? keyFile = args.String("key-file") ?? NonEmpty(Environment.GetEnvironmentVariable("CAMDOOP_KEY_FILE"));
        if (args.String("url") is { } given)
        {
            if (!Uri.TryCreate(given, UriKind.Absolute, out var uri) || uri.Scheme != Uri.UriSchemeHttp || uri.PathAndQuery != "/" || uri.Fragment.Length > 0)
            {
                throw CliException.Usage($"web: --url must be a web view's address like http://10.77.0.1:7080/, not '{given}'");
            }
            url = uri.ToString();
            if (keyFile is null)
            {
                throw CliException.Usage($"web: give --key-file FILE (or set {"CAMDOOP_KEY_FILE"}) with --url");
            }
        }
        else
        {
            string prefix = args.Required("prefix");
            var state = TestbedState.TryLoad(prefix)
                ?? throw new CliException($"web: no testbed '{prefix}' is up; start one with 'camdoop testbed up', or give --url and --key-file");
            if (state.WebPort == 0)
            {
                throw new CliException($"web: testbed '{prefix}' serves no web view (it was brought up with --web-port 0)");
            }
            var server = state.Servers[0];
            if (args.String("server") is { } at)
            {
                if (!Coordinate.TryParse(at, out var c))
                {
                    throw CliException.Usage($"web: --server must be a server like 1,2,0, not '{at}'");
                }
                server = state.Servers.FirstOrDefault(s => s.Parsed == c)
                    ?? throw CliException.Usage($"web: --server {at} is not a server of the testbed's {state.Torus} torus");
            }
            url = state.WebUrl(server);
            keyFile ??= (string?)null ?? throw new CliException($"web: testbed '{prefix}' has no cluster key");
        }
        ClusterKey key;
        try
        {
            key = ClusterKey.Load(keyFile);
        }
        catch (FrontEndException e)
        {
            throw new CliException($"web: {e.Message}");
        }
        string token = new WebToken(key).Value;
        string link = $"{url}#token={token}";
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new { url, token, link });
            return 0;
        }
        Console.Out.WriteLine($"web view: {url}");
        Console.Out.WriteLine($"token:    {token}");
        Console.Out.WriteLine($"open:     {link}");
        Console.Out.WriteLine("(the link logs in at once; keep it private: the token opens the web view of this cube until its key changes)");
        return 0;
    }

    private static string? NonEmpty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}

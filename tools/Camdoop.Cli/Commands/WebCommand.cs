using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `camdoop web`: a link that logs a browser in to a front-end's live web view, or (--revoke) the end of every
/// session of it (docs/monitoring.md#the-live-web-view).
/// </summary>
public static class WebCommand
{
    public static Command Create() =>
        new Command("web", "Print a link that logs in to the live web view once, or end every session of it.")
        {
            Details = "Asks the front-end for a one-time login code and prints https://HOST:PORT/login?code=CODE: open it within\n" +
                      "60 s and the browser has a session for some hours. The view is HTTPS with the node's certificate from the\n" +
                      "cluster CA: the browser must trust the CA's ca.crt, or be told to accept the certificate. For a testbed on\n" +
                      "this machine (--prefix) it asks server 0,0,0 (or --server); for any other cube give --frontend. --revoke\n" +
                      "ends every session of that server's web view and voids its unused codes, without re-keying anything.",
        }
            .Option(FrontEndAddress.Option, "A front-end's address, for a cube that is not a testbed on this machine", "HOST:PORT")
            .Option("prefix", "The testbed's namespace prefix (without --frontend)", "NAME", TestbedState.DefaultPrefix)
            .Option("server", "The testbed server whose web view to open (without --frontend; default 0,0,0)", "X,Y,Z")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("revoke", "End every session of the web view and void its unused login codes")
            .Flag("json", "Print url, loginUrl, expiresInSeconds and sessionSeconds (with --revoke: url, sessions, loginCodes) as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string address = FrontEndOf(args);
        using var client = FrontEndAddress.Connect(args, address);
        string host = FrontEndClient.ParseAddress(client.Address).Host;
        if (args.Flag("revoke"))
        {
            var revoked = FrontEndAddress.Call(() => client.Call(new WebRevokeRequest()));
            string viewUrl = Url(host, revoked.Port, "/");
            if (args.Flag("json"))
            {
                JsonOutput.Write(Console.Out, new { url = viewUrl, sessions = revoked.Sessions, loginCodes = revoked.LoginCodes });
                return 0;
            }
            Console.Out.WriteLine($"web view {viewUrl}: ended {Plural(revoked.Sessions, "session")}, voided {Plural(revoked.LoginCodes, "unused login code")}");
            return 0;
        }
        var login = FrontEndAddress.Call(() => client.Call(new WebLoginRequest()));
        string url = Url(host, login.Port, "/");
        string loginUrl = Url(host, login.Port, "/login?code=" + login.Code);
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new { url, loginUrl, expiresInSeconds = login.ExpiresInSeconds, sessionSeconds = login.SessionSeconds });
            return 0;
        }
        Console.Out.WriteLine($"web view: {url}");
        Console.Out.WriteLine($"log in:   {loginUrl}");
        Console.Out.WriteLine($"(the link works once, within {login.ExpiresInSeconds} s; the session it opens lasts {Duration(login.SessionSeconds)}, " +
                              "until 'camdoop web --revoke'. The browser must trust the cluster CA's ca.crt, or accept the certificate.)");
        return 0;
    }

    /// <summary>The front-end to ask: --frontend, else the testbed server's.</summary>
    private static string FrontEndOf(ParsedArguments args)
    {
        if (args.String(FrontEndAddress.Option) is { } given)
        {
            if (args.String("server") is not null)
            {
                throw CliException.Usage("web: --server picks a testbed's server; with --frontend give that server's front-end instead");
            }
            return given;
        }
        string prefix = args.Required("prefix");
        var state = TestbedState.TryLoad(prefix)
            ?? throw new CliException($"web: no testbed '{prefix}' is up; start one with 'camdoop testbed up', or give --frontend HOST:PORT");
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
        return $"{server.Address}:{state.FrontEndPort}";
    }

    private static string Url(string host, long port, string pathAndQuery) =>
        new UriBuilder(Uri.UriSchemeHttps, host, (int)port).Uri.GetLeftPart(UriPartial.Authority) + pathAndQuery;

    private static string Plural(long n, string what) => n == 1 ? $"1 {what}" : $"{n} {what}s";

    private static string Duration(long seconds) => seconds % 3600 == 0 ? $"{seconds / 3600} h" : seconds % 60 == 0 ? $"{seconds / 60} min" : $"{seconds} s";
}

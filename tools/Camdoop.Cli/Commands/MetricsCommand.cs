using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `camdoop metrics`: the whole cube's metrics as a Prometheus exposition, through the authenticated front-end
/// connection; or (--token) a bearer token for a scraper of the web view's /metrics, or (--revoke) the end of every
/// such token (docs/monitoring.md#metrics).
/// </summary>
public static class MetricsCommand
{
    public static Command Create() =>
        new Command("metrics", "Print the whole cube's metrics in Prometheus's text format, or make a scrape token for /metrics.")
        {
            Details = "The front-end's server gathers every server's counters in one monitoring round and prints them as\n" +
                      "the web view's /metrics serves them: one series per server (server=\"x,y,z\") and port or reason.\n" +
                      "With --token it makes a bearer token that opens that front-end's /metrics (and nothing else) for a\n" +
                      "scraper such as Prometheus, for --days days; --revoke voids every token of it. Exit 1 when a server's\n" +
                      "series are missing (it did not answer the round).",
        }
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("token", "Make a bearer token for the front-end's web view's /metrics and print it")
            .Option("days", "With --token: how long the token lasts, in days (1 to 366; without it 90)", "N")
            .Flag("revoke", "Void every scrape token of the front-end's web view (its browser sessions stay)")
            .Flag("json", "With --token: print url, token and expiresUnixSeconds as JSON; with --revoke: url and tokens")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        bool token = args.Flag("token");
        bool revoke = args.Flag("revoke");
        if (token && revoke)
        {
            throw CliException.Usage("metrics: --token and --revoke do not go together");
        }
        if (args.Has("days") && !token)
        {
            throw CliException.Usage("metrics: --days goes with --token");
        }
        if (args.Flag("json") && !token && !revoke)
        {
            throw CliException.Usage("metrics: --json goes with --token or --revoke (the metrics themselves are text)");
        }
        int days = args.Has("days") ? args.Int("days", 1, 366) : FrontEndSession.DefaultScrapeTokenDays;
        using var client = FrontEndAddress.Connect(args);
        string host = FrontEndClient.ParseAddress(client.Address).Host;
        if (token)
        {
            var issued = FrontEndAddress.Call(() => client.Call(new MetricsTokenRequest { Days = days }));
            string url = Url(host, issued.Port);
            var expires = DateTimeOffset.FromUnixTimeSeconds(issued.ExpiresUnixSeconds);
            if (args.Flag("json"))
            {
                JsonOutput.Write(Console.Out, new { url, token = issued.Token, expiresUnixSeconds = issued.ExpiresUnixSeconds });
                return 0;
            }
            Console.Out.WriteLine($"metrics: {url}");
            Console.Out.WriteLine($"token:   {issued.Token}");
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"expires: {expires:yyyy-MM-dd HH:mm} UTC ({days} days; 'camdoop metrics --revoke' voids it sooner)"));
            Console.Out.WriteLine("(a scraper sends it as 'Authorization: Bearer TOKEN' and must trust the cluster CA's ca.crt)");
            return 0;
        }
        if (revoke)
        {
            var revoked = FrontEndAddress.Call(() => client.Call(new MetricsRevokeRequest()));
            string url = Url(host, revoked.Port);
            if (args.Flag("json"))
            {
                JsonOutput.Write(Console.Out, new { url, tokens = revoked.Tokens });
                return 0;
            }
            Console.Out.WriteLine($"metrics {url}: voided {Units.Count(revoked.Tokens, "scrape token")}");
            return 0;
        }
        // The round's budget is 2 s; a cube's worth of text may take a while more to come over.
        client.ReplyTimeout = TimeSpan.FromMinutes(1);
        var text = new MemoryStream();
        var reply = FrontEndAddress.Call(() => client.Call(new MetricsRequest(), part => text.Write(part.Data.Span)));
        var stdout = Console.OpenStandardOutput();
        stdout.Write(text.GetBuffer().AsSpan(0, (int)text.Length));
        stdout.Flush();
        if (reply.Servers < reply.ServersInCube)
        {
            Console.Error.WriteLine($"camdoop: metrics: {reply.Servers}/{reply.ServersInCube} servers answered; the others' series are missing");
            return 1;
        }
        return 0;
    }

    private static string Url(string host, long port) =>
        new UriBuilder(Uri.UriSchemeHttps, host, (int)port).Uri.GetLeftPart(UriPartial.Authority) + "/metrics";
}

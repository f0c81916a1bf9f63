using System.Globalization;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Links.RawEthernet;

namespace Camdoop.Benchmarks.Links;

/// <summary>
/// Command-line front for <see cref="LinkThroughputProbe"/>: one unshaped veth link between two namespaces, two real
/// nodes flooding 9,014-byte frames over the chosen link driver. Needs root. Wire it as e.g. <c>camdoop-benchmarks link-probe [options]</c>:
/// <code>
///   --seconds N   measured interval (default 3)
///   --warmup N    seconds before measuring (default 1)
///   --one-way     only A sends (default: both directions)
///   --rate N      frames/s each sender offers (default: unpaced flood)
///   --payload N   payload bytes per frame (default 8,988: 9,014-byte frames)
///   --driver D    pcap or afpacket (default: the runtime's default driver)
///   --receive-buffer-mb N   kernel receive buffer per link: the socket's (afpacket) or the capture ring (pcap)
///   --verbose     print the nodes' logs
/// </code>
/// </summary>
public static class LinkThroughputBenchmark
{
    public const string Command = "link-probe";

    public static int Run(string[] args, TextWriter output)
    {
        ArgumentNullException.ThrowIfNull(args);
        ArgumentNullException.ThrowIfNull(output);
        var options = new LinkProbeOptions();
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--seconds":
                    options = options with { Duration = TimeSpan.FromSeconds(Number(args, ++i)) };
                    break;
                case "--warmup":
                    options = options with { Warmup = TimeSpan.FromSeconds(Number(args, ++i)) };
                    break;
                case "--rate":
                    options = options with { FramesPerSecond = Number(args, ++i) };
                    break;
                case "--one-way":
                    options = options with { Bidirectional = false };
                    break;
                case "--payload":
                    options = options with { PayloadSize = (int)Number(args, ++i) };
                    break;
                case "--driver":
                    if (++i >= args.Length || !LinkDrivers.TryParse(args[i], out var driver))
                    {
                        output.WriteLine($"{Command}: --driver must be pcap or afpacket");
                        return 2;
                    }
                    options = options with { Link = options.Link with { Driver = driver } };
                    break;
                case "--receive-buffer-mb":
                    int bytes = (int)(Number(args, ++i) * (1 << 20));
                    options = options with { Link = options.Link with { ReceiveBufferBytes = bytes, CaptureBufferBytes = bytes } };
                    break;
                case "--verbose":
                    options = options with { Log = output };
                    break;
                default:
                    output.WriteLine($"{Command}: unknown option {args[i]} (use --seconds, --warmup, --one-way, --rate, --payload, --driver, --receive-buffer-mb, --verbose)");
                    return 2;
            }
        }
        try
        {
            output.Write(LinkThroughputProbe.Run(options).Describe());
            return 0;
        }
        catch (RawEthernetException ex)
        {
            output.WriteLine($"{Command}: {ex.Message}");
            return 1;
        }
    }

    private static double Number(string[] args, int i)
    {
        if (i >= args.Length || !double.TryParse(args[i], NumberStyles.Float, CultureInfo.InvariantCulture, out double value) || value <= 0)
        {
            throw new ArgumentException($"{Command}: {args[Math.Min(i, args.Length) - 1]} needs a positive number");
        }
        return value;
    }
}

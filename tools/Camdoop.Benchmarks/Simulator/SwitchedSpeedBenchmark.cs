using System.Globalization;
using Camdoop.Experiments.Traffic;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Benchmarks.Simulator;

/// <summary>
/// Speed of the switched simulation: 512 servers behind one switch, TCP incast (every server sends 2 MB to one)
/// and a random permutation, one thread. Prints CSV: packet-hops and events per CPU-second.
/// Usage: <c>switch-speed [servers-torus, default 8x8x8] [MB per flow, default 2] [min RTO ms, default 200] [newreno|dctcp]</c>
/// (DCTCP marks at 64 KiB of queue).
/// </summary>
public static class SwitchedSpeedBenchmark
{
    public static int Run(string[] args, TextWriter output)
    {
        var torus = Torus.Parse(args.Length > 0 ? args[0] : "8x8x8");
        long bytes = (long)(double.Parse(args.Length > 1 ? args[1] : "2", CultureInfo.InvariantCulture) * 1_000_000);
        long minRto = (long)(double.Parse(args.Length > 2 ? args[2] : "200", CultureInfo.InvariantCulture) * SimTime.Millisecond);
        bool dctcp = args.Length > 3 && args[3] == "dctcp";
        var tcp = new TcpOptions { MinRto = minRto, Dctcp = dctcp };
        output.WriteLine("load,servers,flows,payload_bytes,simulated_s,packet_hops,server_frames,events,cpu_s,hops_per_cpu_s,events_per_cpu_s,timeouts,fast_retransmits,segments_resent,switch_drops,corrupt");
        foreach (var (name, flows) in new[]
        {
            ("incast", TcpFlow.Incast(torus.Count, 0, bytes)),
            ("permutation", TcpFlow.Permutation(torus.Count, bytes, seed: 1)),
        })
        {
            using var traffic = new TcpTraffic(new TcpTrafficOptions
            {
                Torus = torus,
                Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch, EcnThresholdBytes = dctcp ? 64 * 1024 : 0 },
                Tcp = tcp,
                Flows = flows,
                CheckBytes = false,
            });
            var r = traffic.Run();
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{name},{torus.Count},{flows.Count},{r.PayloadBytes},{SimTime.ToSeconds(r.Duration):F3},{r.PacketHops},{r.ServerFrames},{r.Events},{r.CpuSeconds:F2},{r.PacketHops / r.CpuSeconds:F0},{r.Events / r.CpuSeconds:F0},{r.Timeouts},{r.FastRetransmits},{r.SegmentsResent},{r.SwitchDrops},{r.CorruptBytes}"));
            output.Flush();
        }
        return 0;
    }
}

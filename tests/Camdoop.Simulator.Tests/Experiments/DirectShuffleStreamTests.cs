using Camdoop.MapReduce.DirectShuffle;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// Streams a server's direct shuffle cannot use (for no job here, or ending inside their preamble) are read to the
/// end, dropped and counted, over the simulated TCP; the server goes on.
/// </summary>
public sealed class DirectShuffleStreamTests
{
    /// <summary>Writes fixed bytes to a stream, then ends it.</summary>
    private sealed class BytesWriter(byte[] bytes) : IStreamWriter
    {
        private int _written;

        public bool Delivered { get; private set; }

        public void Write(IOutboundByteStream stream)
        {
            while (_written < bytes.Length)
            {
                var space = stream.WriteSpace();
                if (space.IsEmpty)
                {
                    return;
                }
                int n = Math.Min(space.Length, bytes.Length - _written);
                bytes.AsSpan(_written, n).CopyTo(space);
                stream.Commit(n);
                _written += n;
            }
            stream.End();
        }

        public void OnWritable(IOutboundByteStream stream) => Write(stream);

        public void OnDelivered(IOutboundByteStream stream) => Delivered = true;
    }

    [Theory]
    [InlineData(100_000)] // a preamble naming a job no server runs, then records
    [InlineData(5)] // ends inside its preamble
    public void AStreamForNoJobIsDroppedAndCounted(int length)
    {
        var torus = new Torus(2, 2, 2);
        var services = new DirectShuffleService[torus.Count];
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch } }, host =>
        {
            var transport = TcpStreamTransport.Install(host, new TcpOptions(), 16 * 1024);
            services[torus.IndexOf(host.Self)] = new DirectShuffleService(host, transport);
        });
        sim.Start();
        var bytes = new byte[Math.Max(length, StreamPreamble.Size)];
        StreamPreamble.Write(bytes, 0xDEAD, 0);
        var writer = new BytesWriter(bytes[..length]);
        sim.ForEachServer(s =>
        {
            if (s == 1)
            {
                writer.Write(services[1].Transport.Open(torus.CoordinateOf(0), writer));
            }
        });
        Assert.True(sim.RunUntil(() => writer.Delivered, 10_000_000_000L));
        Assert.Equal(1, services[0].StreamsDropped);
        Assert.Empty(services[0].Jobs);
    }
}

using Camdoop.MapReduce.DirectShuffle;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// Streams a server's direct shuffle cannot use yet (for a job not started here) are held up to a limit; streams it
/// cannot use at all (ending inside their preamble, or over that limit) are read to the end, dropped and counted,
/// over the simulated TCP; the server goes on.
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

    [Fact]
    public void AStreamEndingInsideItsPreambleIsDroppedAndCounted()
    {
        var receiver = SendOneStream(5, new DirectShuffleOptions());
        Assert.Equal(1, receiver.StreamsDropped);
        Assert.Equal(0, receiver.EarlyBytes);
        Assert.Empty(receiver.Jobs);
    }

    [Fact]
    public void AStreamForAJobNotStartedHereIsHeldUpToTheLimitThenDropped()
    {
        // On real servers the job's start reaches the reducer's server after some senders': their streams wait for it.
        var held = SendOneStream(100_000, new DirectShuffleOptions());
        Assert.Equal(0, held.StreamsDropped);
        Assert.Equal(100_000 - StreamPreamble.Size, held.EarlyBytes);
        // A job that never starts must not hold memory without bound.
        var dropped = SendOneStream(100_000, new DirectShuffleOptions { MaxEarlyBytes = 50_000 });
        Assert.Equal(1, dropped.StreamsDropped);
        Assert.Equal(0, dropped.EarlyBytes);
        Assert.Empty(dropped.Jobs);
    }

    /// <summary>Server 1 sends <paramref name="length"/> bytes (a preamble naming job 0xDEAD first) to server 0; returns server 0's shuffle.</summary>
    private static DirectShuffleService SendOneStream(int length, DirectShuffleOptions options)
    {
        var torus = new Torus(2, 2, 2);
        var services = new DirectShuffleService[torus.Count];
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch } }, host =>
        {
            var transport = TcpStreamTransport.Install(host, new TcpOptions(), 16 * 1024);
            services[torus.IndexOf(host.Self)] = new DirectShuffleService(host, transport, options);
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
        return services[0];
    }
}

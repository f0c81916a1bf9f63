using Camdoop.Experiments;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
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

    [Fact]
    public void AReducerThatStartsAfterItsStreamsOutgrewTheHoldFailsTheJobInsteadOfWaitingForEver()
    {
        var servers = new Torus(2, 2, 2);
        var options = new JobSimulationOptions
        {
            Torus = servers,
            Workload = Workload.WordCount,
            Settings = new SimulationSettings { BytesPerServer = 40_000 },
            ReduceTasks = 1,
            Mode = ShuffleMode.Tcp,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch },
            MapParallelism = 1,
        };
        using var input = JobSimulationInput.Prepare(options);
        var description = new JobDescription
        {
            JobId = 0xB07,
            Job = JobSpec.Parse("wordcount"),
            ReduceTasks = 1,
            Mode = ShuffleMode.Tcp,
            Output = OutputTarget.LocalFiles(),
        };
        var roots = JobPlacement.For(servers, description).RootIndices;
        var plan = new DirectPlan(servers.Count, roots);
        int reducer = roots[0];
        var services = new DirectShuffleService[servers.Count];
        string dataRoot = Directory.CreateTempSubdirectory("camdoop-late-reducer-").FullName;
        try
        {
            using var sim = new Simulation(new SimulationOptions { Torus = servers, Network = options.Network, DataRoot = dataRoot, Threads = 1 }, host =>
            {
                var transport = TcpStreamTransport.Install(host, new TcpOptions(), 16 * 1024);
                services[servers.IndexOf(host.Self)] = new DirectShuffleService(host, transport, new DirectShuffleOptions { MaxEarlyBytes = 8_000, Push = true });
            });
            sim.Start();
            // Every server but the reducer's starts; their streams reach it before the job does, more than it holds.
            sim.ForEachServer(h =>
            {
                if (h != reducer)
                {
                    services[h].StartJob(description, input.Job, [input.MapOutputs[h]], plan);
                }
            });
            Assert.True(sim.RunUntil(() => services[reducer].StreamsDropped > 0, 10_000_000_000L), "no stream outgrew the hold");
            sim.ForEachServer(h =>
            {
                if (h == reducer)
                {
                    services[h].StartJob(description, input.Job, [input.MapOutputs[h]], plan);
                }
            });
            var job = services[reducer].GetJob(description.JobId)!;
            Assert.StartsWith("a stream from ", job.Failure, StringComparison.Ordinal);
            Assert.Contains("came before the job started on", job.Failure, StringComparison.Ordinal);
            Assert.Contains("outgrew the 8000 bytes held for such streams", job.Failure, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(dataRoot, recursive: true);
        }
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

using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Records;
using static Camdoop.MapReduce.Tests.FrontEnd.OneServerFrontEnd;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>
/// The front-end's memory budget over real TCP, with real sessions in front of one server's chunk store: uploads'
/// chunk buffers and downloads' chunks are taken from it, what does not fit is refused in one line, and everything
/// goes back however a request or a connection ends.
/// </summary>
public class FrontEndBudgetTests
{
    private const int KiB = 1024;
    private const int Budget = 1 << 20;

    /// <summary>A front-end holding at most 1 MiB for all its clients, which waits a little for room.</summary>
    private static OneServerFrontEnd Start() =>
        new(new FrontEndServerOptions { MaxBytesHeld = Budget, MemoryWait = TimeSpan.FromMilliseconds(300) });

    private static byte[] RandomBytes(int n, int seed)
    {
        var bytes = new byte[n];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    [Fact]
    public async Task UploadsAndDownloadsBeyondTheBudgetAreRefusedInOneLineAndTheHeldTotalStaysWithinIt()
    {
        using var fe = Start();
        var data = RandomBytes(512 * KiB, 1);
        IReadOnlyList<string> chunks;
        using (var client = fe.Connect())
        {
            chunks = Put(client, "stored", data, 256 * KiB, 64 * KiB);
        }
        // A stored chunk's room goes back before its reply.
        Assert.Equal(0, fe.Budget.Held);

        // Three clients stop in the middle of a chunk, holding the 300 KiB that arrived of it.
        var holders = new List<FrontEndClient>();
        for (int i = 0; i < 3; i++)
        {
            var client = fe.Connect();
            holders.Add(client);
            client.Call(new PutBeginRequest { Name = $"held{i}", Format = "text", Chunks = 1, TotalBytes = Budget });
            client.Call(new PutChunkRequest { Index = 0, Length = Budget, Offset = 0, Data = RandomBytes(300 * KiB, i), Final = false });
        }
        const long Held = 3 * 300 * KiB;
        Assert.Equal(Held, fe.Budget.Held);

        // Eight more at once, half storing a 256 KiB chunk, half reading one: none fits in what is left, and no
        // room comes while they wait, so each gets the same one line.
        var errors = OnThreads(8, i => TryTransfer(fe, i, data, chunks));
        string refusal = $"the front-end is holding {Held} bytes for its clients, at its limit of {Budget}; try again later";
        Assert.All(errors, e => Assert.Equal(refusal, e));
        Assert.Equal(8, fe.Budget.Refusals);
        Assert.Equal(Held, fe.Budget.Held);
        Assert.InRange(fe.Budget.Peak, Held, Budget);

        // The holders go: their room comes back, and the same transfers are served.
        holders.ForEach(h => h.Dispose());
        await WaitForAsync(() => Task.FromResult(fe.Budget.Held == 0), () => $"{fe.Budget.Held} bytes still held after the holders left");
        for (int i = 0; i < 8; i++)
        {
            Assert.Null(TryTransfer(fe, i, data, chunks));
        }
        await WaitForAsync(() => Task.FromResult(fe.Budget.Held == 0), () => $"{fe.Budget.Held} bytes still held after the transfers");
        Assert.Equal(8, fe.Budget.Refusals);
        Assert.InRange(fe.Budget.Peak, Held, Budget);
    }

    /// <summary>
    /// Runs <paramref name="work"/> on threads of their own, all at once: blocking clients on the thread pool would
    /// starve the server's own tasks, which no client on another machine could do.
    /// </summary>
    private static T[] OnThreads<T>(int count, Func<int, T> work)
    {
        var results = new T[count];
        var failures = new Exception?[count];
        var threads = Enumerable.Range(0, count).Select(i => new Thread(() =>
        {
            try
            {
                results[i] = work(i);
            }
            // Reported on the test's thread: a failed assertion here would otherwise end the test process.
            catch (Exception e)
            {
                failures[i] = e;
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        Assert.All(threads, t => Assert.True(t.Join(TimeSpan.FromMinutes(2)), "a client did not finish"));
        Assert.All(failures, Assert.Null);
        return results;
    }

    /// <summary>Stores a 256 KiB chunk (even <paramref name="i"/>) or reads one back (odd); the error, or null.</summary>
    private static string? TryTransfer(OneServerFrontEnd fe, int i, byte[] data, IReadOnlyList<string> chunks)
    {
        using var client = fe.Connect();
        try
        {
            if (i % 2 == 0)
            {
                Put(client, $"late{i}-{Guid.NewGuid():N}", data.AsSpan(0, 256 * KiB).ToArray(), 256 * KiB, 256 * KiB);
            }
            else
            {
                int c = (i / 2) % chunks.Count;
                Assert.Equal(data.AsSpan(c * 256 * KiB, 256 * KiB).ToArray(), Get(client, chunks[c]));
            }
            return null;
        }
        catch (FrontEndException e)
        {
            return e.Message;
        }
    }

    [Fact]
    public async Task ADeclared240MiBChunkHoldsWhatArrivedNotWhatWasDeclared()
    {
        // The default limits: 1 GiB for all clients, 256 MiB for one connection (a chunk of 240 MiB at most).
        using var fe = new OneServerFrontEnd();
        const long Declared = 240L << 20;
        using (var client = fe.Connect())
        {
            client.Call(new PutBeginRequest { Name = "big", Format = "text", Chunks = 1, TotalBytes = Declared });
            client.Call(new PutChunkRequest { Index = 0, Length = Declared, Offset = 0, Data = new byte[1000], Final = false });
            // The buffer's first 64 KiB, not 240 MiB.
            Assert.Equal(64 * KiB, fe.Budget.Held);
            Assert.Equal(64 * KiB, fe.Budget.Peak);
        }
        await WaitForAsync(() => Task.FromResult(fe.Budget.Held == 0), () => $"{fe.Budget.Held} bytes still held after the client left");
    }

    [Fact]
    public void AChunkLargerThanTheWholeBudgetIsRefusedUpFront()
    {
        using var fe = Start();
        using var client = fe.Connect();
        client.Call(new PutBeginRequest { Name = "huge", Format = "text", Chunks = 1, TotalBytes = 2 * Budget });
        var e = Assert.Throws<FrontEndException>(() =>
            client.Call(new PutChunkRequest { Index = 0, Length = 2 * Budget, Offset = 0, Data = new byte[1000], Final = false }));
        Assert.Equal($"chunk 0 of {2 * Budget} bytes is larger than this front-end holds for one connection ({Budget} bytes); store the file with a smaller --chunk-size", e.Message);
        Assert.Equal(0, fe.Budget.Peak);
    }

    [Fact]
    public async Task EveryWayAChunkEndsGivesItsRoomBack()
    {
        using var fe = Start();
        var chunk = RandomBytes(100_000, 2);
        long checksum = (long)XxHash64.Hash(chunk);
        PutChunkRequest Part(int index, int offset, int length, bool final = false, long? sum = null) =>
            new() { Index = index, Length = chunk.Length, Offset = offset, Data = chunk.AsMemory(offset, length), Final = final, Checksum = sum };

        var client = fe.Connect();
        client.Call(new PutBeginRequest { Name = "ds", Format = "text", Chunks = 2, TotalBytes = 2 * chunk.Length });
        client.Call(Part(0, 0, 50_000));
        Assert.Equal(64 * KiB, fe.Budget.Held);
        // A part that does not continue the chunk is refused; the chunk keeps its buffer for the part that does.
        var gap = Assert.Throws<FrontEndException>(() => client.Call(Part(0, 60_000, 10)));
        Assert.Equal("chunk 0: part at offset 60000 with 10 bytes does not continue the 50000 of 100000 bytes received", gap.Message);
        Assert.Equal(64 * KiB, fe.Budget.Held);
        // The final part with the wrong checksum: the chunk is dropped, and its room with it.
        var wrong = Assert.Throws<FrontEndException>(() => client.Call(Part(0, 50_000, 50_000, final: true, sum: checksum ^ 1)));
        Assert.Equal("chunk 0: the bytes received do not match the client's checksum", wrong.Message);
        Assert.Equal(0, fe.Budget.Held);
        // A new upload begun in the middle of a chunk drops it.
        client.Call(Part(0, 0, 50_000));
        Assert.Equal(64 * KiB, fe.Budget.Held);
        client.Call(new PutBeginRequest { Name = "ds2", Format = "text", Chunks = 2, TotalBytes = 2 * chunk.Length });
        Assert.Equal(0, fe.Budget.Held);
        // A chunk stored gives its room back before the reply.
        client.Call(Part(0, 0, 50_000));
        string stored = client.Call(Part(0, 50_000, 50_000, final: true, sum: checksum)).Chunk!;
        Assert.Equal(0, fe.Budget.Held);
        // The client gone in the middle of a chunk.
        client.Call(Part(1, 0, 50_000));
        Assert.Equal(64 * KiB, fe.Budget.Held);
        client.Dispose();
        await WaitForAsync(() => Task.FromResult(fe.Budget.Held == 0), () => $"{fe.Budget.Held} bytes still held after the uploading client left");

        // A download's room goes back once its chunk is sent, and when its client goes without reading it.
        using (var reader = fe.Connect())
        {
            Assert.Equal(chunk, Get(reader, stored));
        }
        await WaitForAsync(() => Task.FromResult(fe.Budget.Held == 0), () => $"{fe.Budget.Held} bytes still held after a download");
        using (var leaver = fe.Connect())
        {
            leaver.SendRaw(MessageFraming.Frame(new GetChunkRequest { Id = 1, Chunk = stored }));
        }
        await WaitForAsync(() => Task.FromResult(fe.Budget.Held == 0), () => $"{fe.Budget.Held} bytes still held after a reader left");
        Assert.Equal(0, fe.Budget.Refusals);
        Assert.InRange(fe.Budget.Peak, 64 * KiB, Budget);
    }
}

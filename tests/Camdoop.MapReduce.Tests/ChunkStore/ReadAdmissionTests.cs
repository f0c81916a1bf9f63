using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>
/// A reader that counts what it holds (the front-end's memory budget) is asked before a read allocates the chunk's
/// bytes, from a replica of its own or from another server's, and a no ends the read with nothing allocated.
/// </summary>
public class ReadAdmissionTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    [Fact]
    public void AReadAsksBeforeItAllocatesAndANoEndsIt()
    {
        using var cube = new StoreCube(Cube);
        var id = ChunkPlacement.ChunkId(Cube, "ds", 0, nonce: 3);
        var bytes = new byte[70_000];
        new Random(4).NextBytes(bytes);
        var written = cube.Write(new Coordinate(1, 1, 1), StoreCube.MetaFor(id, bytes), bytes);
        Assert.True(written.Ok, written.Error);
        var holder = written.Replicas[0];
        var other = Cube.All().First(c => !written.Replicas.Contains(c));

        foreach (var reader in new[] { holder, other })
        {
            var asked = new List<long>();
            var refused = Read(cube, reader, id, meta =>
            {
                asked.Add(meta.Length);
                return false;
            });
            Assert.False(refused.Ok);
            Assert.False(refused.NotFound);
            Assert.Null(refused.Bytes);
            Assert.Equal($"chunk {id}: the reader has no room for its 70000 bytes now", refused.Error);
            // Asked once: a no is the reader's answer for every replica.
            Assert.Equal([70_000L], asked);

            var admitted = Read(cube, reader, id, meta => meta.Length == bytes.Length);
            Assert.True(admitted.Ok, admitted.Error);
            Assert.Equal(bytes, admitted.Bytes);
        }
        // A refused read leaves no transfer behind on either side.
        cube.Settle();
        Assert.Equal(0, cube.Store(other).ActiveInbound);
    }

    private static ReadResult Read(StoreCube cube, Coordinate reader, Key id, Func<ChunkMeta, bool> admit)
    {
        ReadResult? result = null;
        cube.Store(reader).Read(id, r => result = r, admit);
        Assert.True(cube.Sim.RunUntil(() => result is not null, cube.Sim.Now + (60_000 * StoreCube.Ms)), "the read did not finish");
        return result!;
    }
}

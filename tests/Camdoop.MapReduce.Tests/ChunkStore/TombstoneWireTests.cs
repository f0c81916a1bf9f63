using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;

namespace Camdoop.MapReduce.Tests.ChunkStore;

public sealed class TombstoneWireTests
{
    private static Tombstone Sample(int ids) =>
        new("logs", 0xfeedface, Enumerable.Range(0, ids).Select(i => Key.FromString($"chunk {i}")), [3, 7]);

    [Fact]
    public void AFileRoundTripsAndATornOneIsRefused()
    {
        var tombstone = Sample(700);
        var bytes = tombstone.Encode();
        var back = Tombstone.Decode(bytes, servers: 27)!;
        Assert.Equal(tombstone.Name, back.Name);
        Assert.Equal(tombstone.ManifestChecksum, back.ManifestChecksum);
        Assert.True(back.Ids.SetEquals(tombstone.Ids));
        Assert.True(back.Pending.SetEquals([3, 7]));
        Assert.Null(Tombstone.Decode(bytes.AsSpan(0, bytes.Length - 1), servers: 27));
        Assert.Null(Tombstone.Decode(bytes, servers: 5)); // names a server the cube does not have
    }

    [Fact]
    public void PartsCarryEveryIdInFramesThatFit()
    {
        var tombstone = Sample(700);
        Assert.Equal(3, tombstone.Parts);
        var frame = new byte[FrameLayout.MaxPayload];
        var seen = new HashSet<Key>();
        for (int part = 0; part < tombstone.Parts; part++)
        {
            int n = TombstoneWire.WritePart(frame, tombstone, part);
            Assert.True(n <= FrameLayout.MaxPayload);
            Assert.True(TombstoneWire.TryReadPart(frame.AsSpan(0, n), 27, out var read, out int index, out int parts));
            Assert.Equal((part, 3), (index, parts));
            Assert.True(read!.Pending.SetEquals([3, 7]));
            seen.UnionWith(read.Ids);
            Assert.False(TombstoneWire.TryReadPart(frame.AsSpan(0, n - 1), 27, out _, out _, out _));
        }
        Assert.True(seen.SetEquals(tombstone.Ids));
    }

    [Fact]
    public void ItCoversTheRemovedManifestAndChunksOnly()
    {
        var tombstone = Sample(2);
        var chunk = new ChunkMeta { Id = Key.FromString("chunk 1"), Length = 1, Checksum = 9, Dataset = "logs" };
        Assert.True(tombstone.Covers(chunk));
        Assert.False(tombstone.Covers(chunk with { Id = Key.FromString("chunk 2") })); // stored again under the name
        Assert.False(tombstone.Covers(chunk with { Dataset = "other" }));
        var manifest = new ChunkMeta { Id = ChunkPlacement.ManifestId("logs"), Kind = ChunkKind.Manifest, Length = 1, Checksum = 0xfeedface, Dataset = "logs" };
        Assert.True(tombstone.Covers(manifest));
        Assert.False(tombstone.Covers(manifest with { Checksum = 1 }));
    }
}

using System.Globalization;
using System.Text;
using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

public class ChunkFormatTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    [Fact]
    public void ChunkMetadataRoundTripsAndMalformedBytesAreRefused()
    {
        var meta = new ChunkMeta
        {
            Id = Key.FromString("x"),
            Kind = ChunkKind.Data,
            Length = 123_456,
            Checksum = ulong.MaxValue - 5,
            Dataset = "wiki-2010.en",
            Index = 3,
            Count = 27,
            DatasetBytes = 9_999_999,
            Format = DatasetFormat.Records,
            RecordSize = 100,
        };
        var bytes = meta.ToBytes();
        Assert.True(ChunkMeta.TryRead(bytes, out var back, out int used));
        Assert.Equal(meta, back);
        Assert.Equal(bytes.Length, used);
        for (int cut = 0; cut < bytes.Length; cut++)
        {
            Assert.False(ChunkMeta.TryRead(bytes.AsSpan(0, cut), out _, out _));
        }
        var badIndex = (byte[])bytes.Clone();
        badIndex[Key.Size + 1 + 8 + 8] = 0x7f; // index far beyond the count
        Assert.False(ChunkMeta.TryRead(badIndex, out _, out _));
        var badName = (byte[])bytes.Clone();
        badName[^1] = (byte)'/';
        Assert.False(ChunkMeta.TryRead(badName, out _, out _));
    }

    [Fact]
    public void ManifestsRoundTripAndDamageIsReported()
    {
        var manifest = new DatasetManifest
        {
            Name = "corpus",
            TotalBytes = 30,
            CreatedUnixMs = 1_700_000_000_000,
            Chunks = [new ManifestChunk(Key.FromString("a"), 10, ulong.MaxValue), new ManifestChunk(Key.FromString("b"), 20, 1)],
        };
        var back = DatasetManifest.Decode(manifest.Encode());
        Assert.Equal(manifest.Name, back.Name);
        Assert.Equal(manifest.Chunks, back.Chunks);
        Assert.Equal("text", back.FormatName);
        var (meta, bytes) = manifest.ToChunk();
        Assert.Equal(ChunkKind.Manifest, meta.Kind);
        Assert.Equal(ChunkPlacement.ManifestId("corpus"), meta.Id);
        Assert.Equal(2, meta.Count);
        Assert.Equal(bytes.Length, meta.Length);

        var wrongTotal = manifest with { TotalBytes = 31 };
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(wrongTotal.Encode()));
        var encoded = manifest.Encode();
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(encoded.AsMemory(0, encoded.Length - 3)));
    }

    [Fact]
    public void ManifestsHaveTheDocumentedBinaryLayout()
    {
        var manifest = new DatasetManifest
        {
            Name = "corpus",
            Format = DatasetFormat.Records,
            RecordSize = 100,
            TotalBytes = 70_000_030,
            CreatedUnixMs = 1_700_000_000_000,
            Chunks = [new ManifestChunk(Key.FromString("a"), 10, ulong.MaxValue), new ManifestChunk(Key.FromString("b"), 20, 1), new ManifestChunk(Key.FromString("c"), 70_000_000, 300)],
        };
        // The layout written out field by field: magic "CDMF", version 1, format 1, name length 6, record size 100,
        // total bytes, created, chunk count 3, "corpus", then [id | length | checksum] per chunk, all big-endian.
        var expected = new StringBuilder("43444D46" + "01" + "01" + "0006" + "00000064")
            .Append(70_000_030L.ToString("X16", CultureInfo.InvariantCulture))
            .Append(1_700_000_000_000L.ToString("X16", CultureInfo.InvariantCulture))
            .Append("00000003")
            .Append(Convert.ToHexString("corpus"u8));
        foreach (var (id, length, checksum) in new[] { ("a", 10L, ulong.MaxValue), ("b", 20L, 1UL), ("c", 70_000_000L, 300UL) })
        {
            var key = new byte[Key.Size];
            Key.FromString(id).Write(key);
            expected.Append(Convert.ToHexString(key)).Append(length.ToString("X16", CultureInfo.InvariantCulture))
                .Append(checksum.ToString("X16", CultureInfo.InvariantCulture));
        }
        var encoded = manifest.Encode();
        Assert.Equal(expected.ToString(), Convert.ToHexString(encoded));
        var back = DatasetManifest.Decode(encoded);
        Assert.Equal(manifest.Chunks, back.Chunks);
        Assert.Equal(manifest with { Chunks = back.Chunks }, back);
    }

    [Fact]
    public void DamagedManifestsAreRefused()
    {
        var manifest = new DatasetManifest { Name = "d", TotalBytes = 10, Chunks = [new ManifestChunk(Key.FromString("a"), 10, 7)] };
        var bytes = manifest.Encode();
        Assert.Equal("d", DatasetManifest.Decode(bytes).Name);
        byte[] Damaged(int offset, byte value)
        {
            var copy = (byte[])bytes.Clone();
            copy[offset] = value;
            return copy;
        }
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(bytes.AsMemory(0, bytes.Length - 1)));
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(bytes.AsMemory(0, 10)));
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(Damaged(0, (byte)'X'))); // magic
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(Damaged(4, 2))); // version
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(Damaged(5, 7))); // format
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(Damaged(31, 2))); // chunk count without the chunk
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(Damaged(32, (byte)'/'))); // name
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(Damaged(32 + 1 + Key.Size + 7, 11))); // length != total
        Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(Damaged(32 + 1 + Key.Size, 0x80))); // negative length
        var tooMany = (byte[])bytes.Clone();
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(tooMany.AsSpan(28), DatasetManifest.MaxChunks + 1);
        Assert.Contains("more than", Assert.Throws<InvalidDataException>(() => DatasetManifest.Decode(tooMany)).Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ChunkIdsPutOneChunkOnEveryServerWhenThereAreNChunks()
    {
        var owners = Enumerable.Range(0, 27)
            .Select(i => KeyMapper.Shared(Cube).Owner(ChunkPlacement.ChunkId(Cube, "d", i, nonce: 12345), ServerSet.AllOf(Cube)))
            .ToList();
        Assert.Equal(27, owners.Distinct().Count());
        Assert.NotEqual(ChunkPlacement.ChunkId(Cube, "d", 0, 1), ChunkPlacement.ChunkId(Cube, "d", 0, 2));
    }

    [Fact]
    public void TextIsCutAtLineEndsIntoOneChunkPerServerWhenSmall()
    {
        var text = new StringBuilder();
        var random = new Random(1);
        for (int i = 0; i < 500; i++)
        {
            text.Append(new string('w', random.Next(0, 40))).Append(' ').Append(i).Append('\n');
        }
        text.Append("last line without newline");
        var bytes = Encoding.ASCII.GetBytes(text.ToString());
        using var stream = new MemoryStream(bytes);
        var chunks = DatasetChunker.Split(stream, DatasetFormat.Text, 0, chunkSize: 64 << 20, servers: 27);
        Assert.Equal(27, chunks.Count);
        Assert.Equal(0, chunks[0].Offset);
        Assert.Equal(bytes.Length, chunks.Sum(c => c.Length));
        for (int i = 1; i < chunks.Count; i++)
        {
            Assert.Equal(chunks[i - 1].Offset + chunks[i - 1].Length, chunks[i].Offset);
            Assert.Equal((byte)'\n', bytes[chunks[i].Offset - 1]);
        }
        // Balanced: no chunk is more than a line longer than an even share.
        Assert.All(chunks, c => Assert.InRange(c.Length, (bytes.Length / 27) - 60, (bytes.Length / 27) + 60));
    }

    [Fact]
    public void LargeInputsUseTheChunkSizeAndRecordsStayWhole()
    {
        var bytes = new byte[100 * 1000];
        using var stream = new MemoryStream(bytes);
        var chunks = DatasetChunker.Split(stream, DatasetFormat.Records, 100, chunkSize: 3_000, servers: 4);
        Assert.Equal(34, chunks.Count); // ceil(100000 / 3000)
        Assert.All(chunks, c => Assert.Equal(0, c.Length % 100));
        Assert.All(chunks, c => Assert.InRange(c.Length, 1, 3_000));
        Assert.Equal(bytes.Length, chunks.Sum(c => c.Length));

        using var ragged = new MemoryStream(new byte[1050]);
        var e = Assert.Throws<InvalidDataException>(() => DatasetChunker.Split(ragged, DatasetFormat.Records, 100, 64 << 20, 27));
        Assert.Contains("not a whole number of 100-byte records", e.Message, StringComparison.Ordinal);
    }
}

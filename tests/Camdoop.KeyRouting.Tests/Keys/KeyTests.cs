using System.Security.Cryptography;
using System.Text;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting.Tests.Keys;

public class KeyTests
{
    private static byte[] RandomBytes(Random rng)
    {
        var b = new byte[Key.Size];
        rng.NextBytes(b);
        return b;
    }

    [Fact]
    public void Bytes_round_trip_through_read_and_write()
    {
        var rng = new Random(1);
        Span<byte> written = stackalloc byte[Key.Size];
        for (int i = 0; i < 1000; i++)
        {
            var bytes = RandomBytes(rng);
            var key = Key.Read(bytes);
            key.Write(written);
            Assert.True(written.SequenceEqual(bytes));
            Assert.Equal(key, Key.Read(written));
        }
    }

    [Fact]
    public void Words_are_the_big_endian_bytes()
    {
        var bytes = Enumerable.Range(1, Key.Size).Select(i => (byte)i).ToArray();
        var key = Key.Read(bytes);
        Assert.Equal(0x0102030405060708UL, key.High);
        Assert.Equal(0x090A0B0C0D0E0F10UL, key.Middle);
        Assert.Equal(0x11121314U, key.Low);
    }

    [Fact]
    public void Ordering_equals_bytewise_lexicographic_ordering()
    {
        var rng = new Random(2);
        var byteKeys = new List<byte[]>();
        for (int i = 0; i < 3000; i++)
        {
            var b = RandomBytes(rng);
            // Force many shared prefixes so that every word of the comparison is exercised.
            if (i % 3 == 1)
            {
                byteKeys[^1].AsSpan(0, 8).CopyTo(b);
            }
            else if (i % 3 == 2)
            {
                byteKeys[^1].AsSpan(0, 16).CopyTo(b);
            }
            byteKeys.Add(b);
        }
        byteKeys.Add((byte[])byteKeys[5].Clone());
        var keys = byteKeys.Select(b => Key.Read(b)).ToList();
        for (int i = 0; i + 1 < keys.Count; i++)
        {
            int expected = Math.Sign(byteKeys[i].AsSpan().SequenceCompareTo(byteKeys[i + 1]));
            Assert.Equal(expected, Math.Sign(keys[i].CompareTo(keys[i + 1])));
            Assert.Equal(expected == 0, keys[i] == keys[i + 1]);
        }
        var sortedByBytes = byteKeys.OrderBy(b => b, Comparer<byte[]>.Create((a, b) => a.AsSpan().SequenceCompareTo(b))).Select(b => Key.Read(b));
        Assert.Equal(sortedByBytes, keys.Order());
    }

    [Fact]
    public void Equal_keys_have_equal_hashes_and_hashes_spread()
    {
        var rng = new Random(3);
        var hashes = new HashSet<int>();
        for (int i = 0; i < 1000; i++)
        {
            var b = RandomBytes(rng);
            var a = Key.Read(b);
            var c = Key.Read((byte[])b.Clone());
            Assert.Equal(a, c);
            Assert.True(a.Equals((object)c));
            Assert.Equal(a.GetHashCode(), c.GetHashCode());
            hashes.Add(a.GetHashCode());
        }
        // Coordinate keys differ only in the top word; their hashes must still differ.
        var torus = new Torus(8, 8, 8);
        var suffix = Key.FromString("job");
        foreach (var c in torus.All())
        {
            hashes.Add(Key.FromCoordinate(torus, c, suffix).GetHashCode());
        }
        Assert.True(hashes.Count > 1500);
    }

    [Fact]
    public void FromString_is_the_sha1_of_the_utf8_bytes()
    {
        Assert.Equal("a9993e364706816aba3e25717850c26c9cd0d89d", Key.FromString("abc").ToString());
        string longText = new('é', 2000);
        Assert.Equal(Convert.ToHexStringLower(SHA1.HashData(Encoding.UTF8.GetBytes(longText))), Key.FromString(longText).ToString());
        Assert.Equal(Key.FromBytes("chunk-7"u8), Key.FromString("chunk-7"));
    }

    [Fact]
    public void Hex_text_round_trips_and_rejects_bad_input()
    {
        var rng = new Random(4);
        for (int i = 0; i < 200; i++)
        {
            var key = Key.Read(RandomBytes(rng));
            string text = key.ToString();
            Assert.Equal(40, text.Length);
            Assert.Equal(key, Key.Parse(text));
            Assert.Equal(key, Key.Parse(text.ToUpperInvariant()));
        }
        Assert.False(Key.TryParse("abc", out _));
        Assert.False(Key.TryParse(new string('g', 40), out _));
        Assert.False(Key.TryParse(new string('0', 41), out _));
        Assert.Throws<FormatException>(() => Key.Parse("+0" + new string('0', 38)));
        Assert.Throws<ArgumentException>(() => Key.Read(new byte[19]));
    }

    [Theory]
    [InlineData(3, 3, 3)]
    [InlineData(3, 4, 5)]
    [InlineData(8, 8, 8)]
    [InlineData(2, 2, 2)]
    public void FromCoordinate_maps_back_to_its_coordinate_and_keeps_the_suffix(int x, int y, int z)
    {
        var torus = new Torus(x, y, z);
        var mapper = new KeyMapper(torus);
        var suffix = Key.FromString("job-42");
        Span<byte> suffixBytes = stackalloc byte[Key.Size];
        suffix.Write(suffixBytes);
        Span<byte> keyBytes = stackalloc byte[Key.Size];
        foreach (var c in torus.All())
        {
            var key = Key.FromCoordinate(torus, c, suffix);
            Assert.Equal(c, mapper.Primary(key));
            key.Write(keyBytes);
            Assert.True(keyBytes[8..].SequenceEqual(suffixBytes[..Key.SuffixSize]));
            Assert.Equal(key, Key.FromCoordinate(torus, c, suffixBytes[..Key.SuffixSize]));
            // The first value of the interval is exact: one less belongs to the previous server.
            int index = torus.IndexOf(c);
            if (index > 0)
            {
                Assert.Equal(index - 1, mapper.PrimaryIndex(new Key(key.High - 1, 0, 0)));
            }
        }
        Assert.Equal(torus.Count - 1, mapper.PrimaryIndex(Key.MaxValue));
        Assert.Throws<ArgumentOutOfRangeException>(() => Key.FromCoordinate(torus, new Coordinate(x, 0, 0), suffix));
    }
}

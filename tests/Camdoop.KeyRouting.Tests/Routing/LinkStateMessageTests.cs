using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting.Tests.Routing;

public class LinkStateMessageTests
{
    private static readonly Torus Torus = new(3, 4, 5);

    [Fact]
    public void Entries_round_trip()
    {
        var entries = new[]
        {
            new LinkStateAdvertisement(0, 0, 1, 0),
            new LinkStateAdvertisement(59, ulong.MaxValue, uint.MaxValue, LinkStateAdvertisement.AllUp),
            new LinkStateAdvertisement(17, 123_456_789, 42, 0b100101),
        };
        var payload = new byte[LinkStateMessage.SizeFor(entries.Length)];
        LinkStateMessage.WriteHeader(payload, entries.Length);
        for (int i = 0; i < entries.Length; i++)
        {
            LinkStateMessage.WriteEntry(payload, i, Torus, entries[i]);
        }
        Assert.Equal(entries.Length, LinkStateMessage.TryReadCount(payload));
        for (int i = 0; i < entries.Length; i++)
        {
            Assert.True(LinkStateMessage.TryReadEntry(payload, i, Torus, out var read));
            Assert.Equal(entries[i], read);
        }
    }

    [Fact]
    public void Malformed_batches_and_entries_are_refused()
    {
        var payload = new byte[LinkStateMessage.SizeFor(2)];
        LinkStateMessage.WriteHeader(payload, 2);
        LinkStateMessage.WriteEntry(payload, 0, Torus, new LinkStateAdvertisement(5, 1, 1, 1));
        LinkStateMessage.WriteEntry(payload, 1, Torus, new LinkStateAdvertisement(6, 1, 1, 1));
        Assert.Equal(-1, LinkStateMessage.TryReadCount(payload.AsSpan(0, payload.Length - 1)));
        Assert.Equal(-1, LinkStateMessage.TryReadCount(payload.AsSpan(0, 2)));
        var wrongKind = (byte[])payload.Clone();
        wrongKind[0] = 9;
        Assert.Equal(-1, LinkStateMessage.TryReadCount(wrongKind));

        var outside = (byte[])payload.Clone();
        outside[LinkStateMessage.HeaderSize] = 3; // x = 3 on a torus of X size 3
        Assert.False(LinkStateMessage.TryReadEntry(outside, 0, Torus, out _));
        var badBits = (byte[])payload.Clone();
        badBits[LinkStateMessage.HeaderSize + LinkStateMessage.EntrySize + 3] = 0x40;
        Assert.False(LinkStateMessage.TryReadEntry(badBits, 1, Torus, out _));
        Assert.True(LinkStateMessage.TryReadEntry(badBits, 0, Torus, out _));
    }

    [Fact]
    public void Newer_means_a_later_epoch_first_then_a_later_sequence()
    {
        var old = new LinkStateAdvertisement(1, 5, 100, 0);
        Assert.True(new LinkStateAdvertisement(1, 6, 1, 0).IsNewerThan(old));
        Assert.True(new LinkStateAdvertisement(1, 5, 101, 0).IsNewerThan(old));
        Assert.False(new LinkStateAdvertisement(1, 4, 999, 0).IsNewerThan(old));
        Assert.False(old.IsNewerThan(old));
    }
}

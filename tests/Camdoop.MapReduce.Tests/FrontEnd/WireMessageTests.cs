using Camdoop.MapReduce.FrontEnd;
using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.MapReduce.Tests.FrontEnd;

public class WireMessageTests
{
    [Fact]
    public void NestedMessagesRoundTripWithTheirTypes()
    {
        var data = Enumerable.Range(0, 300).Select(i => (byte)i).ToArray();
        var message = new WireMessage("put-chunk")
        {
            { "index", 7L },
            { "data", data },
            { "ratio", 0.25 },
            { "final", true },
            { "nothing", null },
            { "replicas", new List<object?> { "0,0,0", "1,0,0" } },
            { "inner", new WireMessage { { "n", -5L } } },
        };
        var decoded = WireMessage.Decode(message.Encode());
        Assert.Equal("put-chunk", decoded.Op);
        Assert.Equal(7, decoded.GetInt64("index"));
        Assert.Equal(data, decoded.GetBinary("data"));
        Assert.Equal(0.25, decoded.GetDouble("ratio"));
        Assert.True(decoded.GetBoolean("final"));
        Assert.False(decoded.Has("nothing"));
        Assert.Equal(["0,0,0", "1,0,0"], decoded.GetList("replicas").Cast<string>());
        Assert.Equal(-5, decoded.GetMessage("inner").GetInt64("n"));
    }

    [Fact]
    public void TypedGettersNameTheBadField()
    {
        var m = WireMessage.Decode(new WireMessage { { "count", "three" } }.Encode());
        var e = Assert.Throws<FrontEndException>(() => m.GetInt64("count"));
        Assert.Equal("field 'count' is missing or is not an integer", e.Message);
        Assert.Throws<FrontEndException>(() => m.GetString("name"));
        Assert.Equal(9, m.GetInt64("absent", 9));
        var range = Assert.Throws<FrontEndException>(() => WireMessage.Decode(new WireMessage { { "r", 99L } }.Encode()).GetInt32("r", 1, 27));
        Assert.Contains("between 1 and 27", range.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void DeepNestingIsRefused()
    {
        // 40 nested one-element arrays inside a map.
        var bytes = new List<byte> { 0x81, 0xa1, (byte)'x' };
        bytes.AddRange(Enumerable.Repeat((byte)0x91, 40));
        bytes.Add(0x01);
        var e = Assert.Throws<InvalidDataException>(() => WireMessage.Decode(bytes.ToArray()));
        Assert.Contains("nesting", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TrailingBytesAndNonMapMessagesAreRefused()
    {
        var ok = new WireMessage("x").Encode();
        Assert.Throws<InvalidDataException>(() => WireMessage.Decode([.. ok, 0x01]));
        Assert.Throws<InvalidDataException>(() => WireMessage.Decode([0x01]));
        Assert.Throws<InvalidDataException>(() => WireMessage.Decode([]));
    }
}

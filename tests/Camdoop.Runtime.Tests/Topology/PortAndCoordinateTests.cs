using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Topology;

public class PortAndCoordinateTests
{
    [Fact]
    public void OppositePortsShareAnAxisAndHaveOppositeSigns()
    {
        Assert.Equal(Ports.Count, Ports.All.Length);
        for (int i = 0; i < Ports.Count; i++)
        {
            var port = Ports.All[i];
            Assert.Equal(i, (int)port);
            var opposite = port.Opposite();
            Assert.NotEqual(port, opposite);
            Assert.Equal(port, opposite.Opposite());
            Assert.Equal(port.Axis(), opposite.Axis());
            Assert.Equal(-port.Sign(), opposite.Sign());
            Assert.Equal(port, Ports.FromAxis(port.Axis(), port.Sign()));
        }
        Assert.Equal(Port.XMinus, Port.XPlus.Opposite());
        Assert.Equal(Port.ZPlus, Port.ZMinus.Opposite());
    }

    [Fact]
    public void PortNamesRoundTrip()
    {
        foreach (var port in Ports.All)
        {
            Assert.True(Ports.TryParse(port.Name(), out var parsed));
            Assert.Equal(port, parsed);
            Assert.True(Ports.TryParse(port.Name().ToLowerInvariant(), out parsed));
            Assert.Equal(port, parsed);
        }
        Assert.False(Ports.TryParse("X", out _));
        Assert.False(Ports.TryParse("+W", out _));
    }

    [Theory]
    [InlineData("1,2,3")]
    [InlineData("(1,2,3)")]
    [InlineData(" ( 1 , 2 , 3 ) ")]
    public void CoordinateParsesWithOrWithoutParentheses(string text)
    {
        Assert.True(Coordinate.TryParse(text, out var c));
        Assert.Equal(new Coordinate(1, 2, 3), c);
        Assert.True(Coordinate.TryParse(c.ToString(), out var again));
        Assert.Equal(c, again);
    }

    [Theory]
    [InlineData("")]
    [InlineData("1,2")]
    [InlineData("1,2,3,4")]
    [InlineData("1,-2,3")]
    [InlineData("a,b,c")]
    public void CoordinateRejectsMalformedText(string text)
    {
        Assert.False(Coordinate.TryParse(text, out _));
    }

    [Fact]
    public void CoordinateAxisAccessAndWith()
    {
        var c = new Coordinate(4, 5, 6);
        Assert.Equal(4, c[0]);
        Assert.Equal(5, c[1]);
        Assert.Equal(6, c[2]);
        Assert.Equal(new Coordinate(4, 9, 6), c.With(1, 9));
        Assert.Throws<ArgumentOutOfRangeException>(() => c[3]);
    }
}

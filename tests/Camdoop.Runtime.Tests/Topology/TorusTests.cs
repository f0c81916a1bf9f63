using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Topology;

public class TorusTests
{
    public static TheoryData<int, int, int> Shapes => new() { { 3, 3, 3 }, { 2, 3, 4 }, { 8, 8, 8 } };

    [Theory]
    [MemberData(nameof(Shapes))]
    public void IndexAndCoordinateRoundTripOverEveryServer(int x, int y, int z)
    {
        var torus = new Torus(x, y, z);
        Assert.Equal(x * y * z, torus.Count);
        var seen = new bool[torus.Count];
        for (int i = 0; i < torus.Count; i++)
        {
            var c = torus.CoordinateOf(i);
            Assert.True(torus.Contains(c));
            Assert.Equal(i, torus.IndexOf(c));
            Assert.False(seen[i]);
            seen[i] = true;
        }
        foreach (var c in torus.All())
        {
            Assert.Equal(c, torus.CoordinateOf(torus.IndexOf(c)));
        }
    }

    [Theory]
    [MemberData(nameof(Shapes))]
    public void NeighboursDifferByOneStepOnOneAxisAndOppositePortsLeadBack(int x, int y, int z)
    {
        var torus = new Torus(x, y, z);
        foreach (var c in torus.All())
        {
            foreach (var port in Ports.All)
            {
                var n = torus.Neighbour(c, port);
                Assert.True(torus.Contains(n));
                Assert.Equal(c, torus.Neighbour(n, port.Opposite()));
                int axis = port.Axis();
                int size = torus.Size(axis);
                Assert.Equal(((c[axis] + port.Sign()) % size + size) % size, n[axis]);
                for (int other = 0; other < 3; other++)
                {
                    if (other != axis)
                    {
                        Assert.Equal(c[other], n[other]);
                    }
                }
                Assert.Equal(1, torus.Distance(c, n));
                Assert.Equal(torus.IndexOf(n), torus.NeighbourIndex(torus.IndexOf(c), port));
            }
        }
    }

    [Fact]
    public void NeighboursWrapAroundAtTheEdges()
    {
        var torus = new Torus(3, 4, 5);
        Assert.Equal(new Coordinate(0, 1, 1), torus.Neighbour(new Coordinate(2, 1, 1), Port.XPlus));
        Assert.Equal(new Coordinate(2, 1, 1), torus.Neighbour(new Coordinate(0, 1, 1), Port.XMinus));
        Assert.Equal(new Coordinate(1, 0, 1), torus.Neighbour(new Coordinate(1, 3, 1), Port.YPlus));
        Assert.Equal(new Coordinate(1, 3, 1), torus.Neighbour(new Coordinate(1, 0, 1), Port.YMinus));
        Assert.Equal(new Coordinate(1, 1, 0), torus.Neighbour(new Coordinate(1, 1, 4), Port.ZPlus));
        Assert.Equal(new Coordinate(1, 1, 4), torus.Neighbour(new Coordinate(1, 1, 0), Port.ZMinus));
    }

    [Theory]
    [MemberData(nameof(Shapes))]
    public void DistanceAndOffsetsMatchBreadthFirstSearch(int x, int y, int z)
    {
        var torus = new Torus(x, y, z);
        var hops = new int[torus.Count];
        var queue = new Queue<int>();
        int diameter = 0;
        for (int source = 0; source < torus.Count; source++)
        {
            Array.Fill(hops, -1);
            hops[source] = 0;
            queue.Enqueue(source);
            while (queue.Count > 0)
            {
                int u = queue.Dequeue();
                foreach (var port in Ports.All)
                {
                    int v = torus.NeighbourIndex(u, port);
                    if (hops[v] < 0)
                    {
                        hops[v] = hops[u] + 1;
                        queue.Enqueue(v);
                    }
                }
            }
            var a = torus.CoordinateOf(source);
            for (int target = 0; target < torus.Count; target++)
            {
                var b = torus.CoordinateOf(target);
                Assert.Equal(hops[target], torus.Distance(a, b));
                int sum = 0;
                for (int axis = 0; axis < 3; axis++)
                {
                    int size = torus.Size(axis);
                    int offset = torus.Offset(a, b, axis);
                    Assert.InRange(offset, -((size - 1) / 2), size / 2);
                    Assert.Equal(b[axis], ((a[axis] + offset) % size + size) % size);
                    sum += Math.Abs(offset);
                }
                Assert.Equal(hops[target], sum);
                diameter = Math.Max(diameter, hops[target]);
            }
        }
        Assert.Equal(torus.Diameter, diameter);
    }

    [Fact]
    public void PortToFindsTheLinkBetweenNeighboursOnly()
    {
        var torus = new Torus(3, 3, 3);
        var c = new Coordinate(0, 1, 2);
        foreach (var port in Ports.All)
        {
            Assert.Equal(port, torus.PortTo(c, torus.Neighbour(c, port)));
        }
        Assert.Null(torus.PortTo(c, c));
        Assert.Null(torus.PortTo(c, new Coordinate(1, 2, 2)));

        // In a dimension of size 2 both ports of the axis reach the same server; the plus port is reported.
        var small = new Torus(2, 3, 3);
        Assert.Equal(Port.XPlus, small.PortTo(new Coordinate(0, 0, 0), new Coordinate(1, 0, 0)));
        Assert.Equal(Port.XPlus, small.PortTo(new Coordinate(1, 0, 0), new Coordinate(0, 0, 0)));
    }

    [Theory]
    [InlineData("3x3x3", 3, 3, 3)]
    [InlineData(" 8X8X8 ", 8, 8, 8)]
    [InlineData("2x3x255", 2, 3, 255)]
    public void TryParseAcceptsWellFormedShapes(string text, int x, int y, int z)
    {
        Assert.True(Torus.TryParse(text, out var torus, out var error));
        Assert.Null(error);
        Assert.Equal(new Torus(x, y, z), torus);
        Assert.Equal($"{x}x{y}x{z}", torus!.ToString());
    }

    [Theory]
    [InlineData("")]
    [InlineData("3x3")]
    [InlineData("3x3x3x3")]
    [InlineData("1x3x3")]
    [InlineData("3x0x3")]
    [InlineData("3x-3x3")]
    [InlineData("256x2x2")]
    [InlineData("axbxc")]
    [InlineData("3,3,3")]
    [InlineData("3x3.5x3")]
    public void TryParseRejectsMalformedShapesWithAMessage(string text)
    {
        Assert.False(Torus.TryParse(text, out var torus, out var error));
        Assert.Null(torus);
        Assert.False(string.IsNullOrWhiteSpace(error));
        Assert.Contains($"'{text}'", error, StringComparison.Ordinal);
        var ex = Assert.Throws<FormatException>(() => Torus.Parse(text));
        Assert.Equal(error, ex.Message);
    }

    [Theory]
    [InlineData(1, 3, 3)]
    [InlineData(3, 256, 3)]
    [InlineData(3, 3, -1)]
    public void ConstructorRejectsBadDimensions(int x, int y, int z)
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new Torus(x, y, z));
    }

    [Fact]
    public void EqualityIsByShape()
    {
        Assert.Equal(new Torus(2, 3, 4), new Torus(2, 3, 4));
        Assert.NotEqual(new Torus(2, 3, 4), new Torus(4, 3, 2));
        Assert.Equal(new Torus(2, 3, 4).GetHashCode(), new Torus(2, 3, 4).GetHashCode());
    }
}

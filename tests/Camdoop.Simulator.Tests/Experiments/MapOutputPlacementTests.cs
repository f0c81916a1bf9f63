using Camdoop.Experiments;

namespace Camdoop.Simulator.Tests.Experiments;

public sealed class MapOutputPlacementTests
{
    private const long GB = 1L << 30;

    [Theory]
    [InlineData(1 * GB, 24 * GB, true)]          // 8x8x8 with 2 MB per server on this 24 GB machine
    [InlineData(3 * GB / 2, 24 * GB, true)]      // exactly a sixteenth
    [InlineData((3 * GB / 2) + 1, 24 * GB, false)]
    [InlineData(4 * GB, 24 * GB, false)]         // 8x8x8 with 8 MB per server: run files on disk
    [InlineData(0, 0, true)]
    [InlineData(-1, 24 * GB, false)]
    public void MapOutputsStayInMemoryUpToASixteenthOfTheMemoryInInput(long inputBytes, long availableBytes, bool inMemory) =>
        Assert.Equal(inMemory, JobSimulationInput.MapOutputFitsInMemory(inputBytes, availableBytes));
}

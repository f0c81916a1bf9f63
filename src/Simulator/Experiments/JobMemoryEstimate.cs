namespace Camdoop.Experiments;

/// <summary>
/// About how much memory a simulated job needs at its peak, so that a run that cannot fit is refused before it starts
/// instead of being killed by the kernel minutes later. The model comes from measured runs (peak resident memory,
/// 2 MB per server, S=1): per server, the map outputs (twice the input in memory; on disk about a third
/// of that stays, the rest is page cache) and the shuffle buffers (a quarter of the buffer budget at R=1; at R &gt; 1
/// the budget times 1 + R/512, because minimum windows and one merger per busy vertex overcommit it), plus about
/// 1.7 KB per vertex (R x 6 per server: the vertex, its streams and its merger) and the runtime's own 0.3 GB.
/// Measured against estimated (GB): 8x8x8 R=1 2.8 / 3.5, R=8 6.8 / 6.9, R=64 8.1 / 7.6, R=512 14.2 / 13.7;
/// 6x6x6 R=216 4.6 / 4.3; 10x10x10 R=1 (on disk) 3.2 / 3.9; 12x12x12 R=1 (on disk) 5.5 / 6.5.
/// </summary>
public static class JobMemoryEstimate
{
    private const long BytesPerVertex = 1700;
    private const long RuntimeBytes = 300L * 1024 * 1024;

    /// <summary>
    /// How many runs go side by side in <paramref name="available"/> bytes when <paramref name="held"/> bytes are shared
    /// by all of them and each adds <paramref name="perRun"/>: at least one, at most <paramref name="most"/>.
    /// </summary>
    public static int RunsThatFit(long available, long held, long perRun, int most = int.MaxValue) =>
        (int)Math.Clamp((available - held) / Math.Max(1, perRun), 1, most);

    /// <summary>Estimated peak memory of one simulated job: <see cref="InputBytes"/> plus <see cref="ShuffleBytes"/>.</summary>
    public static long Bytes(int servers, int reduceTasks, long inputBytesPerServer, bool mapOutputOnDisk, long bufferBudgetPerServer) =>
        Saturate((double)InputBytes(servers, inputBytesPerServer, mapOutputOnDisk) + ShuffleBytes(servers, reduceTasks, bufferBudgetPerServer));

    /// <summary>
    /// The part of a job that runs side by side on the same input share: every server's map outputs, and the runtime.
    /// </summary>
    public static long InputBytes(int servers, long inputBytesPerServer, bool mapOutputOnDisk)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(servers);
        ArgumentOutOfRangeException.ThrowIfNegative(inputBytesPerServer);
        double maps = inputBytesPerServer * (mapOutputOnDisk ? 0.7 : 2.0);
        return Saturate((servers * maps) + RuntimeBytes);
    }

    /// <summary>The part each run of a job needs for itself: every server's shuffle buffers and vertices.</summary>
    public static long ShuffleBytes(int servers, int reduceTasks, long bufferBudgetPerServer)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(servers);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(reduceTasks);
        ArgumentOutOfRangeException.ThrowIfNegative(bufferBudgetPerServer);
        double buffers = bufferBudgetPerServer * (reduceTasks == 1 ? 0.25 : 1 + (reduceTasks / 512.0));
        double vertices = (double)reduceTasks * Camdoop.MapReduce.Trees.TreeTopology.TreeCount * BytesPerVertex;
        return Saturate(servers * (buffers + vertices));
    }

    private static long Saturate(double bytes) => bytes >= long.MaxValue ? long.MaxValue : (long)bytes;
}

using System.Buffers.Text;

namespace Camdoop.MapReduce.DataGen;

/// <summary>
/// "Indy" sort input (the Camdoop paper, §5.1, sortbenchmark.org): 100-byte records, a 10-byte key of uniformly random bytes and
/// a 90-byte value (the server and record number in hex, then filler, then CR LF, as gensort's ASCII-free layout).
/// </summary>
public sealed class SortDataGenerator(int servers, long inputBytesPerServer, ulong seed)
{
    public const int RecordBytes = 100;
    public const int KeyBytes = 10;

    public int Servers { get; } = servers;

    public long RecordsPerServer { get; } = inputBytesPerServer / RecordBytes;

    public byte[] GenerateServer(int server)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)server, (uint)Servers, nameof(server));
        var random = new DeterministicRandom(seed, 100 + (ulong)server);
        var data = new byte[RecordsPerServer * RecordBytes];
        for (long r = 0; r < RecordsPerServer; r++)
        {
            var record = data.AsSpan((int)(r * RecordBytes), RecordBytes);
            random.NextBytes(record[..KeyBytes]);
            var value = record[KeyBytes..];
            value.Fill((byte)'.');
            Utf8Formatter.TryFormat((ulong)server, value, out int w, new System.Buffers.StandardFormat('X', 8));
            Utf8Formatter.TryFormat((ulong)r, value[(w + 1)..], out _, new System.Buffers.StandardFormat('X', 16));
            value[^2] = (byte)'\r';
            value[^1] = (byte)'\n';
        }
        return data;
    }
}

using System.Buffers.Text;

namespace Camdoop.MapReduce.DataGen;

/// <summary>TopK input: lines "item TAB score", items of 6-14 lowercase letters, scores uniform in 0..999,999 (ties occur).</summary>
public sealed class TopKDataGenerator(int servers, long inputBytesPerServer, ulong seed)
{
    public const int MaxScore = 999_999;

    public int Servers { get; } = servers;

    public byte[] GenerateServer(int server)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)server, (uint)Servers, nameof(server));
        var random = new DeterministicRandom(seed, 400 + (ulong)server);
        var output = new byte[inputBytesPerServer + 32];
        int position = 0;
        while (position < inputBytesPerServer)
        {
            int length = random.Next(6, 14);
            for (int i = 0; i < length; i++)
            {
                output[position++] = (byte)('a' + random.Next(26));
            }
            output[position++] = (byte)'\t';
            Utf8Formatter.TryFormat(random.Next(MaxScore + 1), output.AsSpan(position), out int digits);
            position += digits;
            output[position++] = (byte)'\n';
        }
        return output[..position];
    }
}

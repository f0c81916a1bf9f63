using System.Text;

namespace Camdoop.MapReduce.DataGen;

/// <summary>
/// English-like text for WordCount: words drawn from a Zipf-distributed vocabulary (rank r has weight 1/r^s),
/// lines of 1-16 words, some capitalised, some followed by punctuation, some numbers and a few non-ASCII words,
/// so the tokenizer's rules are exercised. Every server draws from the same vocabulary: generated words, or, with
/// <c>commonWords</c>, those words at the top ranks (the demo's English) and generated words below them.
/// </summary>
public sealed class TextDataGenerator
{
    private static readonly byte[][] Specials =
    [
        "café"u8.ToArray(), "naïve"u8.ToArray(), "Straße"u8.ToArray(), "e-mail"u8.ToArray(), "don't"u8.ToArray(),
    ];

    private readonly byte[][] _vocabulary;
    private readonly double[] _cumulative;
    private readonly ulong _seed;
    private readonly long _inputBytesPerServer;

    public TextDataGenerator(int servers, long inputBytesPerServer, ulong seed, int vocabularySize = 20_000, double zipfExponent = 1.0,
        IReadOnlyList<string>? commonWords = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(vocabularySize, 1);
        Servers = servers;
        _seed = seed;
        _inputBytesPerServer = inputBytesPerServer;
        var random = new DeterministicRandom(seed, 200);
        var words = new HashSet<string>(StringComparer.Ordinal);
        var vocabulary = new List<byte[]>(vocabularySize);
        foreach (string common in commonWords ?? [])
        {
            if (vocabulary.Count < vocabularySize && common.Length > 0 && common.All(char.IsAsciiLetterLower) && words.Add(common))
            {
                vocabulary.Add(Encoding.ASCII.GetBytes(common));
            }
        }
        while (vocabulary.Count < vocabularySize)
        {
            int length = 1 + random.Next(4) + random.Next(4) + random.Next(5); // 1..11, mostly 4-7
            var word = new char[length];
            for (int i = 0; i < length; i++)
            {
                word[i] = (char)('a' + random.Next(26));
            }
            var text = new string(word);
            if (words.Add(text))
            {
                vocabulary.Add(Encoding.ASCII.GetBytes(text));
            }
        }
        _vocabulary = [.. vocabulary];
        _cumulative = new double[vocabularySize];
        double sum = 0;
        for (int r = 0; r < vocabularySize; r++)
        {
            sum += 1.0 / Math.Pow(r + 1, zipfExponent);
            _cumulative[r] = sum;
        }
        for (int r = 0; r < vocabularySize; r++)
        {
            _cumulative[r] /= sum;
        }
    }

    public int Servers { get; }

    public byte[] GenerateServer(int server)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)server, (uint)Servers, nameof(server));
        var random = new DeterministicRandom(_seed, 300 + (ulong)server);
        var output = new MemoryStream((int)Math.Min(int.MaxValue, _inputBytesPerServer + 256));
        while (output.Length < _inputBytesPerServer)
        {
            int words = random.Next(1, 16);
            for (int w = 0; w < words; w++)
            {
                if (w > 0)
                {
                    output.WriteByte((byte)' ');
                }
                WriteWord(output, random);
            }
            output.WriteByte((byte)'\n');
        }
        return output.ToArray();
    }

    private void WriteWord(MemoryStream output, DeterministicRandom random)
    {
        int kind = random.Next(100);
        if (kind == 0)
        {
            output.Write(Specials[random.Next(Specials.Length)]);
            return;
        }
        if (kind == 1)
        {
            output.Write(Encoding.ASCII.GetBytes(random.Next(10_000).ToString(System.Globalization.CultureInfo.InvariantCulture)));
            return;
        }
        double u = random.NextDouble();
        int rank = Array.BinarySearch(_cumulative, u);
        rank = rank < 0 ? Math.Min(~rank, _vocabulary.Length - 1) : rank;
        var word = _vocabulary[rank];
        if (kind < 12)
        {
            output.WriteByte((byte)(word[0] - 32)); // capitalised
            output.Write(word, 1, word.Length - 1);
        }
        else
        {
            output.Write(word);
        }
        if (kind >= 95)
        {
            output.WriteByte(",.;:!?"u8[random.Next(6)]);
        }
    }
}

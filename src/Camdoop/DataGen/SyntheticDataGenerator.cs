namespace Camdoop.MapReduce.DataGen;

/// <summary>
/// Input for the synthetic job (paper §5.2) at a requested output ratio S = output size / intermediate size, both
/// in logical bytes (key + 4-byte counter). Lines are keys of 4-28 printable characters (uniform length); no key
/// repeats within a server. Model: a set of common keys present on every server plus keys unique to one server.
/// With c the common bytes and u the unique bytes per server, S = (c + N u) / (N c + N u); the common set is sized
/// from the requested input size and u is then chosen from the actual c, so S lands within a few records of the
/// target. S = 0 means 1/N (every key on every server); S = 1 means every key unique.
/// <para>
/// Keys are unique by construction: a key of length L encodes a distinct id in its first min(L, 9) characters (a
/// bijective scramble, so prefixes look random), followed by random characters. Each server's data depends only on
/// (seed, server), so servers can be generated independently and lazily.
/// </para>
/// </summary>
public sealed class SyntheticDataGenerator
{
    public const int MinKeyLength = 4;
    public const int MaxKeyLength = 28;
    public const int CounterBytes = 4;

    private const int Alphabet = 94; // '!' .. '~': printable, no space, TAB or newline
    private const int IdChars = 9;   // 94^9 < 2^63
    private const ulong Scrambler = 1_000_000_007; // prime, coprime with 94^k
    private const ulong CommonStream = 1;
    private const ulong LengthStream = 2;
    private const ulong ContentStream = 3;
    private const ulong ShuffleStream = 4;

    private readonly byte[] _commonLines;
    private readonly int[] _commonLineEnds;
    private readonly long[] _uniqueLogicalBytes;

    public SyntheticDataGenerator(int servers, double outputRatio, long inputBytesPerServer, ulong seed)
    {
        if (servers < 2)
        {
            throw new ArgumentOutOfRangeException(nameof(servers), servers, "the synthetic data set needs at least two servers");
        }
        if (outputRatio != 0 && (outputRatio < 1.0 / servers || outputRatio > 1))
        {
            throw new ArgumentOutOfRangeException(nameof(outputRatio), outputRatio,
                $"S must be 0 (meaning 1/N) or between 1/N = {1.0 / servers:F4} and 1");
        }
        ArgumentOutOfRangeException.ThrowIfLessThan(inputBytesPerServer, MaxKeyLength + 1);
        Servers = servers;
        RequestedOutputRatio = outputRatio;
        TargetOutputRatio = outputRatio == 0 ? 1.0 / servers : outputRatio;
        InputBytesPerServer = inputBytesPerServer;
        Seed = seed;

        // Common share of each server's bytes: S = (c + N u)/(N (c + u))  =>  c/(c+u) = N (1 - S) / (N - 1).
        double commonShare = Math.Clamp(servers * (1 - TargetOutputRatio) / (servers - 1), 0, 1);
        (_commonLines, _commonLineEnds, CommonLogicalBytes) = MakeCommonKeys((long)Math.Round(commonShare * inputBytesPerServer));
        UniqueLogicalBytesTarget = TargetOutputRatio >= 1
            ? -1 // fill each server up to the input size instead
            : CommonLogicalBytes * (TargetOutputRatio * servers - 1) / ((1 - TargetOutputRatio) * servers);

        _uniqueLogicalBytes = new long[servers];
        for (int s = 0; s < servers; s++)
        {
            _uniqueLogicalBytes[s] = PlanUniqueLengths(s).Sum(l => (long)l + CounterBytes);
        }
    }

    public int Servers { get; }

    public double RequestedOutputRatio { get; }

    /// <summary>The S aimed at (1/N when 0 was requested).</summary>
    public double TargetOutputRatio { get; }

    public long InputBytesPerServer { get; }

    public ulong Seed { get; }

    /// <summary>Logical bytes (key + counter) of the common key set, which every server holds.</summary>
    public long CommonLogicalBytes { get; }

    public int CommonKeys => _commonLineEnds.Length;

    /// <summary>Unique logical bytes each server aims at (-1 when S = 1: servers are filled to the input size).</summary>
    public double UniqueLogicalBytesTarget { get; }

    /// <summary>Intermediate size: every server's (key, counter) records.</summary>
    public long IntermediateLogicalBytes => Servers * CommonLogicalBytes + _uniqueLogicalBytes.Sum();

    /// <summary>Output size: every distinct key once, with its counter.</summary>
    public long OutputLogicalBytes => CommonLogicalBytes + _uniqueLogicalBytes.Sum();

    /// <summary>S of the generated data, from the keys actually generated.</summary>
    public double AchievedOutputRatio => (double)OutputLogicalBytes / IntermediateLogicalBytes;

    /// <summary>The input file of <paramref name="server"/>: its keys, one per line, in random order.</summary>
    public byte[] GenerateServer(int server)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)server, (uint)Servers, nameof(server));
        var lengths = PlanUniqueLengths(server);
        var content = new DeterministicRandom(Seed, ContentStream + ((ulong)server + 1) * 16);
        var counters = new long[MaxKeyLength + 1];
        int uniqueBytes = lengths.Sum(l => l + 1);
        var unique = new byte[uniqueBytes];
        var uniqueEnds = new int[lengths.Count];
        int offset = 0;
        for (int i = 0; i < lengths.Count; i++)
        {
            offset += WriteKey(unique.AsSpan(offset), lengths[i], counters[lengths[i]]++, server + 1, content);
            unique[offset++] = (byte)'\n';
            uniqueEnds[i] = offset;
        }

        // Shuffle the line order so map input is not sorted.
        int total = _commonLineEnds.Length + uniqueEnds.Length;
        var order = new int[total];
        for (int i = 0; i < total; i++)
        {
            order[i] = i;
        }
        var shuffle = new DeterministicRandom(Seed, ShuffleStream + ((ulong)server + 1) * 16);
        for (int i = total - 1; i > 0; i--)
        {
            int j = shuffle.Next(i + 1);
            (order[i], order[j]) = (order[j], order[i]);
        }
        var output = new byte[_commonLines.Length + unique.Length];
        int position = 0;
        foreach (int line in order)
        {
            ReadOnlySpan<byte> source = line < _commonLineEnds.Length
                ? Line(_commonLines, _commonLineEnds, line)
                : Line(unique, uniqueEnds, line - _commonLineEnds.Length);
            source.CopyTo(output.AsSpan(position));
            position += source.Length;
        }
        return output;
    }

    private static ReadOnlySpan<byte> Line(byte[] data, int[] ends, int index)
    {
        int start = index == 0 ? 0 : ends[index - 1];
        return data.AsSpan(start, ends[index] - start);
    }

    private (byte[] Lines, int[] Ends, long LogicalBytes) MakeCommonKeys(long targetInputBytes)
    {
        var lengthRandom = new DeterministicRandom(Seed, CommonStream);
        var lengths = new List<int>();
        long input = 0;
        while (true)
        {
            int length = lengthRandom.Next(MinKeyLength, MaxKeyLength);
            if (input + (length + 1) / 2.0 > targetInputBytes)
            {
                break;
            }
            lengths.Add(length);
            input += length + 1;
        }
        var content = new DeterministicRandom(Seed, ContentStream);
        var counters = new long[MaxKeyLength + 1];
        var lines = new byte[input];
        var ends = new int[lengths.Count];
        int offset = 0;
        long logical = 0;
        for (int i = 0; i < lengths.Count; i++)
        {
            offset += WriteKey(lines.AsSpan(offset), lengths[i], counters[lengths[i]]++, 0, content);
            lines[offset++] = (byte)'\n';
            ends[i] = offset;
            logical += lengths[i] + CounterBytes;
        }
        return (lines, ends, logical);
    }

    /// <summary>Key lengths of a server's unique keys; stops at the length total closest to the target.</summary>
    private List<int> PlanUniqueLengths(int server)
    {
        var random = new DeterministicRandom(Seed, LengthStream + ((ulong)server + 1) * 16);
        var lengths = new List<int>();
        bool fillInput = UniqueLogicalBytesTarget < 0;
        double target = fillInput ? InputBytesPerServer - _commonLines.Length : UniqueLogicalBytesTarget;
        double total = 0;
        while (true)
        {
            int length = random.Next(MinKeyLength, MaxKeyLength);
            int size = fillInput ? length + 1 : length + CounterBytes;
            if (total + size / 2.0 > target)
            {
                return lengths;
            }
            lengths.Add(length);
            total += size;
        }
    }

    /// <summary>
    /// Writes the key number <paramref name="index"/> of length <paramref name="length"/> for <paramref name="slot"/>
    /// (0 = common, s + 1 = unique to server s): distinct (length, index, slot) give distinct keys.
    /// </summary>
    private int WriteKey(Span<byte> destination, int length, long index, int slot, DeterministicRandom content)
    {
        int idChars = Math.Min(length, IdChars);
        UInt128 space = 1;
        for (int i = 0; i < idChars; i++)
        {
            space *= Alphabet;
        }
        UInt128 id = (UInt128)(ulong)index * (ulong)(Servers + 1) + (ulong)slot;
        if (id >= space)
        {
            throw new InvalidOperationException(
                $"the synthetic key space for {length}-character keys is exhausted; use less data per server or fewer servers");
        }
        UInt128 scrambled = id * Scrambler % space;
        for (int i = idChars - 1; i >= 0; i--)
        {
            destination[i] = (byte)('!' + (int)(scrambled % Alphabet));
            scrambled /= Alphabet;
        }
        for (int i = idChars; i < length; i++)
        {
            destination[i] = (byte)('!' + content.Next(Alphabet));
        }
        return length;
    }
}

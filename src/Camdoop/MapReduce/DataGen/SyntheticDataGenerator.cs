using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.DataGen;

/// <summary>
/// Input for the synthetic job (the Camdoop paper, §5.2) at a requested output ratio S = output size / intermediate size, both
/// in logical bytes (key + 4-byte counter). Lines are keys of 4-28 printable characters (uniform length); no key
/// repeats within a server. Model: a set of common keys present on every server plus keys unique to one server.
/// With c the common bytes and u the unique bytes per server, S = (c + N u) / (N c + N u); the common set is sized
/// from the requested input size and u is then chosen from the actual c, so S lands within a few records of the
/// target. S = 0 means 1/N (every key on every server); S = 1 means every key unique.
/// <para>
/// Keys are unique by construction: a key of length L encodes a distinct id in its first min(L, 9) characters (a
/// bijective scramble, so prefixes look random; for L of 9 or more the id includes L, so keys of different lengths
/// do not share their first characters), followed by random characters. Each server's data depends only on
/// (seed, server), so servers can be generated independently and lazily.
/// </para>
/// </summary>
public sealed class SyntheticDataGenerator
{
    public const int MinKeyLength = 4;
    public const int MaxKeyLength = 28;
    public const int CounterBytes = 4;

    private const int Alphabet = 94; // '!' .. '~': printable, no space, TAB or newline
    private const int IdChars = 9;   // 94^9 < 2^62
    private const int LowDigits = 5;
    private const ulong LowDigitsSpace = 94UL * 94 * 94 * 94 * 94; // a constant, so dividing by it is a multiply
    private const ulong Scrambler = 1_000_000_007; // prime, coprime with 94^k
    private const ulong CommonStream = 1;
    private const ulong LengthStream = 2;
    private const ulong ContentStream = 3;
    private const ulong ShuffleStream = 4;

    // 94^k for k = 0 .. IdChars: the id space of a key with k id characters.
    private static readonly ulong[] IdSpaceTable = IdSpaces();

    // The two characters of every base-94 digit pair 0 .. 94^2 - 1.
    private static readonly byte[] DigitPairTable = DigitPairs();

    // Per-thread buffers of GenerateServer, reused from server to server: allocating them afresh was most of what
    // generating the map phase's input allocated (and fresh memory is slow to touch).
    [ThreadStatic]
    private static Scratch? s_threadScratch;

    // Lines are copied as two 16-byte blocks (keys are at most 28 characters): the line arrays end with this many
    // spare bytes so the copies may read past a line.
    private const int LineCopySlack = 32;

    // Lines ahead whose cache line WriteShuffled requests.
    private const int PrefetchDistance = 12;

    private readonly byte[] _commonLines; // _commonBytes of lines, then LineCopySlack spare bytes
    private readonly int _commonBytes;
    private readonly int[] _commonLineEnds;
    private long[]? _uniqueLogicalBytes;

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
        _commonBytes = _commonLines.Length - LineCopySlack;
        UniqueLogicalBytesTarget = TargetOutputRatio >= 1
            ? -1 // fill each server up to the input size instead
            : CommonLogicalBytes * (TargetOutputRatio * servers - 1) / ((1 - TargetOutputRatio) * servers);
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
    public long IntermediateLogicalBytes => Servers * CommonLogicalBytes + UniqueLogicalBytes.Sum();

    /// <summary>Output size: every distinct key once, with its counter.</summary>
    public long OutputLogicalBytes => CommonLogicalBytes + UniqueLogicalBytes.Sum();

    /// <summary>S of the generated data, from the keys actually generated.</summary>
    public double AchievedOutputRatio => (double)OutputLogicalBytes / IntermediateLogicalBytes;

    /// <summary>The input file of <paramref name="server"/>: its keys, one per line, in random order.</summary>
    public byte[] GenerateServer(int server) => GenerateServer(server, shuffleLines: true);

    /// <summary>
    /// The input of <paramref name="server"/>, its lines shuffled or left in generation order (see
    /// <see cref="GenerateServer(int, ref byte[], bool)"/>).
    /// </summary>
    public byte[] GenerateServer(int server, bool shuffleLines)
    {
        var scratch = PrepareServer(server, shuffleLines);
        var output = new byte[_commonBytes + scratch.UniqueBytes];
        Write(scratch, output, shuffleLines);
        return output;
    }

    /// <summary>
    /// The input file of <paramref name="server"/> written into <paramref name="buffer"/> (replaced by a larger one
    /// when too short); returns its length. For callers that map one server after another and keep no input.
    /// With <paramref name="shuffleLines"/> false the lines stay as generated: the common keys, then the server's own.
    /// Keys are scrambled ids, so that order is not sorted either, and a map task that sorts its output makes the
    /// same runs of both (tested); what it saves is the shuffle, a quarter of generating a server's input.
    /// </summary>
    public int GenerateServer(int server, ref byte[] buffer, bool shuffleLines = true)
    {
        ArgumentNullException.ThrowIfNull(buffer);
        var scratch = PrepareServer(server, shuffleLines);
        int length = _commonBytes + scratch.UniqueBytes;
        if (buffer.Length < length)
        {
            // Headroom: other servers' inputs differ by a few keys.
            buffer = new byte[(int)Math.Min(Array.MaxLength, length + (length / 16L))];
        }
        Write(scratch, buffer.AsSpan(0, length), shuffleLines);
        return length;
    }

    /// <summary>Writes the common and the prepared unique lines into <paramref name="output"/>, shuffled or in generation order.</summary>
    private void Write(Scratch scratch, Span<byte> output, bool shuffleLines)
    {
        if (shuffleLines)
        {
            WriteShuffled(scratch, output);
            return;
        }
        _commonLines.AsSpan(0, _commonBytes).CopyTo(output);
        scratch.Unique.AsSpan(0, scratch.UniqueBytes).CopyTo(output[_commonBytes..]);
    }

    /// <summary>Writes the unique keys of <paramref name="server"/> and, when asked, the shuffled line order into the thread's scratch.</summary>
    private Scratch PrepareServer(int server, bool shuffleLines)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)server, (uint)Servers, nameof(server));
        var scratch = s_threadScratch ??= new Scratch();
        int count = PlanUniqueLengths(server, ref scratch.Lengths);
        var lengths = scratch.Lengths.AsSpan(0, count);
        long uniqueBytes = 0;
        foreach (int length in lengths)
        {
            uniqueBytes += length + 1;
        }
        if (_commonBytes + uniqueBytes + LineCopySlack > Array.MaxLength)
        {
            throw new InvalidOperationException("a server's synthetic input exceeds 2 GB");
        }
        EnsureLength(ref scratch.Unique, (int)uniqueBytes + LineCopySlack);
        EnsureLength(ref scratch.UniqueEnds, count);
        var unique = scratch.Unique.AsSpan(0, (int)uniqueBytes);
        var uniqueEnds = scratch.UniqueEnds.AsSpan(0, count);
        var content = new DeterministicRandom(Seed, ContentStream + ((ulong)server + 1) * 16);
        Span<long> counters = stackalloc long[MaxKeyLength + 1];
        counters.Clear();
        int offset = 0;
        for (int i = 0; i < lengths.Length; i++)
        {
            int length = lengths[i];
            offset += WriteKey(unique[offset..], length, counters[length]++, server + 1, content);
            unique[offset++] = (byte)'\n';
            uniqueEnds[i] = offset;
        }
        scratch.UniqueBytes = (int)uniqueBytes;
        scratch.UniqueLines = count;
        if (!shuffleLines)
        {
            return scratch;
        }

        // Shuffle the line order so map input is not sorted.
        int total = _commonLineEnds.Length + count;
        EnsureLength(ref scratch.Order, total);
        var order = scratch.Order.AsSpan(0, total);
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
        return scratch;
    }

    /// <summary>Copies the common and unique lines into <paramref name="output"/> in the shuffled order.</summary>
    private void WriteShuffled(Scratch scratch, Span<byte> output)
    {
        var uniqueEnds = scratch.UniqueEnds.AsSpan(0, scratch.UniqueLines);
        int common = _commonLineEnds.Length;
        ref byte commonLines = ref MemoryMarshal.GetArrayDataReference(_commonLines);
        ref byte uniqueLines = ref MemoryMarshal.GetArrayDataReference(scratch.Unique);
        ref byte destination = ref MemoryMarshal.GetReference(output);
        // Below this position the destination has room for a 32-byte copy.
        int blockCopyEnd = output.Length - LineCopySlack;
        int position = 0;
        var order = scratch.Order.AsSpan(0, common + scratch.UniqueLines);
        for (int k = 0; k < order.Length; k++)
        {
            // The lines are visited in random order, across more than the L2 cache: ask for one a few lines ahead.
            if (k + PrefetchDistance < order.Length)
            {
                int ahead = order[k + PrefetchDistance];
                if (ahead < common)
                {
                    CacheLine.Prefetch(ref Unsafe.Add(ref commonLines, ahead == 0 ? 0 : _commonLineEnds[ahead - 1]));
                }
                else
                {
                    CacheLine.Prefetch(ref Unsafe.Add(ref uniqueLines, ahead == common ? 0 : uniqueEnds[ahead - common - 1]));
                }
            }
            int line = order[k];
            int start, length;
            ref byte lines = ref commonLines;
            if (line < common)
            {
                (start, length) = Line(_commonLineEnds, line);
            }
            else
            {
                (start, length) = Line(uniqueEnds, line - common);
                lines = ref uniqueLines;
            }
            if ((uint)position + (uint)length > (uint)output.Length)
            {
                throw new InvalidOperationException("the lines do not fit the output"); // never: the output is sized from them
            }
            ref byte source = ref Unsafe.Add(ref lines, start);
            ref byte target = ref Unsafe.Add(ref destination, position);
            if (length <= 32 && position <= blockCopyEnd)
            {
                // A line and what follows it (the next line writes over that): a memmove per line of random length
                // mispredicted its size branches.
                Vector128.LoadUnsafe(ref source).StoreUnsafe(ref target);
                Vector128.LoadUnsafe(ref source, 16).StoreUnsafe(ref target, 16);
            }
            else
            {
                Unsafe.CopyBlockUnaligned(ref target, ref source, (uint)length);
            }
            position += length;
        }
    }

    /// <summary>Replaces <paramref name="array"/> by a larger one, without its content, when shorter than <paramref name="length"/>.</summary>
    private static void EnsureLength<T>(ref T[] array, int length)
    {
        if (array.Length < length)
        {
            array = new T[Math.Max(length, (int)Math.Min(Array.MaxLength, array.Length * 2L))];
        }
    }

    /// <summary>Start and length of line <paramref name="index"/>, from the lines' end offsets.</summary>
    private static (int Start, int Length) Line(ReadOnlySpan<int> ends, int index)
    {
        int start = index == 0 ? 0 : ends[index - 1];
        return (start, ends[index] - start);
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
        var lines = new byte[input + LineCopySlack];
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

    /// <summary>Logical bytes of each server's unique keys, planned on first use (only data set summaries need them).</summary>
    private long[] UniqueLogicalBytes => LazyInitializer.EnsureInitialized(ref _uniqueLogicalBytes, () =>
    {
        var totals = new long[Servers];
        var lengths = Array.Empty<int>();
        for (int s = 0; s < Servers; s++)
        {
            int count = PlanUniqueLengths(s, ref lengths);
            foreach (int length in lengths.AsSpan(0, count))
            {
                totals[s] += length + CounterBytes;
            }
        }
        return totals;
    });

    /// <summary>
    /// Key lengths of a server's unique keys into <paramref name="lengths"/> (grown as needed); stops at the length
    /// total closest to the target. Returns how many.
    /// </summary>
    private int PlanUniqueLengths(int server, ref int[] lengths)
    {
        var random = new DeterministicRandom(Seed, LengthStream + ((ulong)server + 1) * 16);
        bool fillInput = UniqueLogicalBytesTarget < 0;
        double target = fillInput ? InputBytesPerServer - _commonBytes : UniqueLogicalBytesTarget;
        double total = 0;
        int count = 0;
        while (true)
        {
            int length = random.Next(MinKeyLength, MaxKeyLength);
            int size = fillInput ? length + 1 : length + CounterBytes;
            if (total + size / 2.0 > target)
            {
                return count;
            }
            if (count == lengths.Length)
            {
                Array.Resize(ref lengths, Math.Max(1024, count * 2));
            }
            lengths[count++] = length;
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
        ulong space = IdSpaceTable[idChars];
        // id = index * (N + 1) + slot, in 128 bits. Keys of IdChars characters or more share one id space, so the
        // length goes into their id too: otherwise key i of every such length began with the same IdChars characters,
        // twenty keys to each 8-byte prefix, which random strings (the paper's workload) almost never do.
        ulong high = Math.BigMul((ulong)index, (ulong)(Servers + 1), out ulong low);
        ulong id = low + (ulong)slot;
        if (id < low)
        {
            high++;
        }
        if (length >= IdChars)
        {
            const ulong Lengths = MaxKeyLength - IdChars + 1;
            ulong idHigh = Math.BigMul(id, Lengths, out ulong idLow);
            high = (high * Lengths) + idHigh;
            id = idLow + (ulong)(length - IdChars);
            if (id < idLow)
            {
                high++;
            }
        }
        if (high != 0 || id >= space)
        {
            throw new InvalidOperationException(
                $"the synthetic key space for {length}-character keys is exhausted; use less data per server or fewer servers");
        }
        ulong scrambled = MultiplyModulo(id, Scrambler, space);
        // Base-94 digits, most significant first, two at a time from a table, as two independent chains of
        // divisions (the last five digits and the rest) rather than one chain of nine.
        int split = Math.Max(0, idChars - LowDigits);
        WriteDigits(destination, split, idChars - split, scrambled % LowDigitsSpace);
        WriteDigits(destination, 0, split, scrambled / LowDigitsSpace);
        content.NextDigits(destination[idChars..length], (byte)'!', Alphabet);
        return length;
    }

    /// <summary>Writes <paramref name="count"/> base-94 digits of <paramref name="value"/> at <paramref name="offset"/>, most significant first.</summary>
    private static void WriteDigits(Span<byte> destination, int offset, int count, ulong value)
    {
        var pairs = DigitPairTable;
        int i = offset + count;
        while (i - offset >= 2)
        {
            ulong pair = value % (Alphabet * Alphabet);
            value /= Alphabet * Alphabet;
            i -= 2;
            destination[i] = pairs[2 * (int)pair];
            destination[i + 1] = pairs[(2 * (int)pair) + 1];
        }
        if (i > offset)
        {
            destination[offset] = (byte)('!' + (int)(value % Alphabet));
        }
    }

    private static byte[] DigitPairs()
    {
        var pairs = new byte[2 * Alphabet * Alphabet];
        for (int p = 0; p < Alphabet * Alphabet; p++)
        {
            pairs[2 * p] = (byte)('!' + (p / Alphabet));
            pairs[(2 * p) + 1] = (byte)('!' + (p % Alphabet));
        }
        return pairs;
    }

    /// <summary>
    /// a * b mod m for a &lt; m &lt; 2^62 and a small b, without a 128-bit division (a software loop in .NET): the
    /// quotient is below b, so its double estimate is off by at most one. a * b - quotient * m then lies in
    /// [-m, 2m), inside the long range, so its low 64 bits (wrapping arithmetic) are exact; it is corrected into [0, m).
    /// </summary>
    private static ulong MultiplyModulo(ulong a, ulong b, ulong m)
    {
        ulong quotient = (ulong)((double)a * b / m);
        long remainder = unchecked((long)((a * b) - (quotient * m)));
        while (remainder < 0)
        {
            remainder += (long)m;
        }
        while (remainder >= (long)m)
        {
            remainder -= (long)m;
        }
        return (ulong)remainder;
    }

    private static ulong[] IdSpaces()
    {
        var spaces = new ulong[IdChars + 1];
        spaces[0] = 1;
        for (int k = 1; k <= IdChars; k++)
        {
            spaces[k] = spaces[k - 1] * Alphabet;
        }
        return spaces;
    }

    /// <summary>One thread's generation buffers.</summary>
    private sealed class Scratch
    {
        public int[] Lengths = [];
        public byte[] Unique = [];
        public int[] UniqueEnds = [];
        public int[] Order = [];
        public int UniqueBytes;
        public int UniqueLines;
    }
}

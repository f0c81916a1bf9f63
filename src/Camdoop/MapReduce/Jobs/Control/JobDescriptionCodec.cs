using System.Buffers.Binary;
using System.Text;
using System.Text.Unicode;
using Camdoop.MapReduce.Trees;

namespace Camdoop.MapReduce.Jobs.Control;

/// <summary>
/// Binary encoding of a <see cref="JobDescription"/>, small enough to broadcast in one jumbo frame. Big-endian,
/// like the job-control frame that carries it:
/// <code>
///  0 u32 magic "CDJB"   4 u16 version (3)   6 u16 total length
///  8 u64 job id        16 i32 reduce tasks  20 u8 mode   21 u8 output kind   22 u16 option count
/// 24 i64 memory budget
/// 32 u8 tree family    33 u8 flags (bit 0: replicate the output, bit 1: roots placed, bit 2: push)
/// 34 u16 parallel fetches (0: the servers choose)   36 4 bytes zero
/// 40 str job target, then option count x (str name, str value), str input path, str output directory
/// then, with bit 1 only: u32 x reduce tasks, each reduce task's root server index in task order
/// </code>
/// where str = u16 byte length + UTF-8 bytes. Version 2 was the same layout little-endian; it is refused with an
/// error that says so. Decoding validates every length and field and never throws on
/// malformed bytes: it returns false with a reason.
/// </summary>
public static class JobDescriptionCodec
{
    public const uint Magic = 0x4344_4A42; // "CDJB"
    public const ushort Version = 3;
    public const int FixedSize = 40;

    /// <summary>Largest encoding accepted (fits a jumbo frame's key-routed payload with room for a header).</summary>
    public const int MaxEncodedSize = 8192;

    private const int MaxOptions = 64;

    private const byte FlagReplicateOutput = 1;

    private const byte FlagRootsPlaced = 2;

    private const byte FlagPush = 4;

    /// <summary>Version 2, the little-endian layout of older builds, as its bytes read big-endian.</summary>
    private const ushort LittleEndianVersion2 = 0x0200;

    public static byte[] Encode(JobDescription job)
    {
        ArgumentNullException.ThrowIfNull(job);
        var buffer = new byte[MaxEncodedSize];
        int length = Encode(job, buffer);
        return buffer[..length];
    }

    /// <summary>Writes the encoding into <paramref name="destination"/> and returns its length.</summary>
    public static int Encode(JobDescription job, Span<byte> destination)
    {
        ArgumentNullException.ThrowIfNull(job);
        if (job.Job.Options.Count > MaxOptions)
        {
            throw new ArgumentException($"a job may have at most {MaxOptions} options");
        }
        if (destination.Length < FixedSize)
        {
            throw new ArgumentException("destination too small for a job description", nameof(destination));
        }
        BinaryPrimitives.WriteUInt32BigEndian(destination, Magic);
        BinaryPrimitives.WriteUInt16BigEndian(destination[4..], Version);
        BinaryPrimitives.WriteUInt64BigEndian(destination[8..], job.JobId);
        BinaryPrimitives.WriteInt32BigEndian(destination[16..], job.ReduceTasks);
        destination[20] = (byte)job.Mode;
        destination[21] = (byte)job.Output.Kind;
        BinaryPrimitives.WriteUInt16BigEndian(destination[22..], (ushort)job.Job.Options.Count);
        BinaryPrimitives.WriteInt64BigEndian(destination[24..], job.MemoryBudgetBytes);
        destination[32] = (byte)job.Trees;
        destination[33] = (byte)((job.ReplicateOutput ? FlagReplicateOutput : 0) | (job.Roots is not null ? FlagRootsPlaced : 0)
            | (job.Push ? FlagPush : 0));
        BinaryPrimitives.WriteUInt16BigEndian(destination[34..], checked((ushort)job.ParallelFetches));
        destination[36..FixedSize].Clear();
        int offset = FixedSize;
        offset += WriteString(destination[offset..], job.Job.Target);
        foreach (var option in job.Job.Options.OrderBy(o => o.Key, StringComparer.Ordinal))
        {
            offset += WriteString(destination[offset..], option.Key);
            offset += WriteString(destination[offset..], option.Value);
        }
        offset += WriteString(destination[offset..], job.Input.RelativePath);
        offset += WriteString(destination[offset..], job.Output.Directory);
        if (job.Roots is not null)
        {
            if (job.Roots.Count != job.ReduceTasks || destination.Length - offset < 4 * job.Roots.Count)
            {
                throw new ArgumentException($"{job.Roots.Count} roots for R = {job.ReduceTasks} do not fit the job description");
            }
            foreach (int root in job.Roots)
            {
                BinaryPrimitives.WriteInt32BigEndian(destination[offset..], root);
                offset += 4;
            }
        }
        if (offset > MaxEncodedSize)
        {
            throw new ArgumentException($"the job description needs {offset} bytes, more than {MaxEncodedSize}");
        }
        BinaryPrimitives.WriteUInt16BigEndian(destination[6..], (ushort)offset);
        return offset;
    }

    /// <summary>Decodes a description; false with <paramref name="error"/> when the bytes are not a valid one.</summary>
    public static bool TryDecode(ReadOnlySpan<byte> source, out JobDescription? job, out string? error)
    {
        job = null;
        if (source.Length < FixedSize)
        {
            error = $"job description truncated: {source.Length} bytes, the fixed part alone is {FixedSize}";
            return false;
        }
        if (BinaryPrimitives.ReadUInt32BigEndian(source) != Magic)
        {
            error = "not a job description (bad magic)";
            return false;
        }
        ushort version = BinaryPrimitives.ReadUInt16BigEndian(source[4..]);
        if (version != Version)
        {
            error = version == LittleEndianVersion2
                ? $"job description version 2 (the little-endian layout of an older build) is not supported: this build reads version {Version}"
                : $"unsupported job description version {version}: this build reads version {Version}";
            return false;
        }
        int total = BinaryPrimitives.ReadUInt16BigEndian(source[6..]);
        if (total < FixedSize || total > source.Length || total > MaxEncodedSize)
        {
            error = $"job description length {total} does not fit the {source.Length} bytes received";
            return false;
        }
        source = source[..total];
        ulong jobId = BinaryPrimitives.ReadUInt64BigEndian(source[8..]);
        int reduceTasks = BinaryPrimitives.ReadInt32BigEndian(source[16..]);
        var mode = (ShuffleMode)source[20];
        var outputKind = (OutputKind)source[21];
        int optionCount = BinaryPrimitives.ReadUInt16BigEndian(source[22..]);
        long budget = BinaryPrimitives.ReadInt64BigEndian(source[24..]);
        var trees = (TreeFamily)source[32];
        byte flags = source[33];
        int parallelFetches = BinaryPrimitives.ReadUInt16BigEndian(source[34..]);
        if ((flags & ~(FlagReplicateOutput | FlagRootsPlaced | FlagPush)) != 0 || source[36..FixedSize].ContainsAnyExcept((byte)0))
        {
            error = "job description: reserved bytes are not zero";
            return false;
        }
        if (optionCount > MaxOptions)
        {
            error = $"job description has {optionCount} options, at most {MaxOptions} are allowed";
            return false;
        }
        int offset = FixedSize;
        if (!TryReadString(source, ref offset, out string? target) || target!.Length == 0)
        {
            error = "job description: bad job target";
            return false;
        }
        var options = new Dictionary<string, string>(StringComparer.Ordinal);
        for (int i = 0; i < optionCount; i++)
        {
            if (!TryReadString(source, ref offset, out string? name) || !TryReadString(source, ref offset, out string? value)
                || name!.Length == 0 || !options.TryAdd(name, value!))
            {
                error = $"job description: bad option {i}";
                return false;
            }
        }
        if (!TryReadString(source, ref offset, out string? input) || !TryReadString(source, ref offset, out string? output))
        {
            error = "job description: bad input or output path";
            return false;
        }
        int[]? roots = null;
        if ((flags & FlagRootsPlaced) != 0)
        {
            if (reduceTasks < 1 || (long)total - offset != 4L * reduceTasks)
            {
                error = $"job description: {total - offset} bytes of root placement for R = {reduceTasks}";
                return false;
            }
            roots = new int[reduceTasks];
            for (int r = 0; r < reduceTasks; r++, offset += 4)
            {
                roots[r] = BinaryPrimitives.ReadInt32BigEndian(source[offset..]);
            }
        }
        if (offset != total)
        {
            error = $"job description: {total - offset} unexpected bytes after the last field";
            return false;
        }
        var decoded = new JobDescription
        {
            JobId = jobId,
            Job = new JobSpec(target, options),
            ReduceTasks = reduceTasks,
            Mode = mode,
            Input = new InputDescription(input!),
            Output = new OutputTarget(outputKind, output!),
            MemoryBudgetBytes = budget,
            Trees = trees,
            ReplicateOutput = (flags & FlagReplicateOutput) != 0,
            Roots = roots,
            ParallelFetches = parallelFetches,
            Push = (flags & FlagPush) != 0,
        };
        try
        {
            decoded.Validate(0);
        }
        catch (ArgumentException e)
        {
            error = e.Message;
            return false;
        }
        job = decoded;
        error = null;
        return true;
    }

    private static int WriteString(Span<byte> destination, string text)
    {
        int count = Encoding.UTF8.GetByteCount(text);
        if (count > ushort.MaxValue || 2 + count > destination.Length)
        {
            throw new ArgumentException($"string field of {count} bytes does not fit the job description");
        }
        BinaryPrimitives.WriteUInt16BigEndian(destination, (ushort)count);
        Encoding.UTF8.GetBytes(text, destination[2..]);
        return 2 + count;
    }

    private static bool TryReadString(ReadOnlySpan<byte> source, ref int offset, out string? text)
    {
        text = null;
        if (source.Length - offset < 2)
        {
            return false;
        }
        int count = BinaryPrimitives.ReadUInt16BigEndian(source[offset..]);
        if (source.Length - offset - 2 < count)
        {
            return false;
        }
        var bytes = source.Slice(offset + 2, count);
        if (!Utf8.IsValid(bytes))
        {
            return false;
        }
        text = Encoding.UTF8.GetString(bytes);
        offset += 2 + count;
        return true;
    }
}

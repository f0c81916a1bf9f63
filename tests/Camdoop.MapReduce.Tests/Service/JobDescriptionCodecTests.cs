using System.Globalization;
using System.Text;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;

namespace Camdoop.MapReduce.Tests.Service;

public sealed class JobDescriptionCodecTests
{
    private static JobDescription Sample() => new()
    {
        JobId = 0x0123_4567_89AB_CDEF,
        Job = JobSpec.Parse("topk?k=25&extra=é"),
        ReduceTasks = 27,
        Mode = ShuffleMode.NoAgg,
        Input = new InputDescription("inputs/day-1"),
        Output = OutputTarget.LocalFiles("results"),
        MemoryBudgetBytes = 440L * 1024 * 1024,
        Trees = TreeFamily.Paper,
    };

    [Fact]
    public void RoundTripsEveryField()
    {
        var job = Sample();
        var bytes = JobDescriptionCodec.Encode(job);
        Assert.True(JobDescriptionCodec.TryDecode(bytes, out var decoded, out string? error), error);
        Assert.Equal(job.JobId, decoded!.JobId);
        Assert.Equal(job.Job.ToString(), decoded.Job.ToString());
        Assert.Equal((job.ReduceTasks, job.Mode, job.Input, job.Output, job.MemoryBudgetBytes, job.Trees),
            (decoded.ReduceTasks, decoded.Mode, decoded.Input, decoded.Output, decoded.MemoryBudgetBytes, decoded.Trees));
        // Options are written in name order, so equal descriptions encode identically.
        Assert.Equal(bytes, JobDescriptionCodec.Encode(decoded));
    }

    [Fact]
    public void TheEncodingHasTheDocumentedBinaryLayout()
    {
        // The layout written out field by field, all big-endian: magic "CDJB", version 3, total length, job id, R = 27,
        // mode 1 (noagg), output 0 (local files), 2 options, memory budget, tree family 1 (paper), flags 0, parallel fetches 0, 4 zero
        // bytes, then
        // each string as a u16 length and UTF-8: target, the options in name order, input path, output directory.
        static string Str(string text)
        {
            var utf8 = Encoding.UTF8.GetBytes(text);
            return utf8.Length.ToString("X4", CultureInfo.InvariantCulture) + Convert.ToHexString(utf8);
        }
        string strings = Str("topk") + Str("extra") + Str("é") + Str("k") + Str("25") + Str("inputs/day-1") + Str("results");
        int total = 40 + (strings.Length / 2);
        string expected = "43444A42" + "0003" + total.ToString("X4", CultureInfo.InvariantCulture)
            + "0123456789ABCDEF" + "0000001B" + "01" + "00" + "0002"
            + (440L * 1024 * 1024).ToString("X16", CultureInfo.InvariantCulture) + "01" + "00000000000000" + strings;

        var bytes = JobDescriptionCodec.Encode(Sample());
        Assert.Equal(expected, Convert.ToHexString(bytes));
        Assert.True(JobDescriptionCodec.TryDecode(Convert.FromHexString(expected), out var decoded, out string? error), error);
        Assert.Equal(Sample().JobId, decoded!.JobId);
    }

    [Fact]
    public void AVersion2LittleEndianDescriptionIsRefusedWithAClearError()
    {
        // Version 2 had the same fields little-endian; its magic bytes were the same "CDJB".
        var bytes = JobDescriptionCodec.Encode(Sample());
        bytes[4] = 2;
        bytes[5] = 0;
        Assert.False(JobDescriptionCodec.TryDecode(bytes, out _, out string? error));
        Assert.Contains("version 2", error, StringComparison.Ordinal);
        Assert.Contains("little-endian", error, StringComparison.Ordinal);

        bytes[4] = 0;
        bytes[5] = 9;
        Assert.False(JobDescriptionCodec.TryDecode(bytes, out _, out error));
        Assert.Contains("unsupported job description version 9", error, StringComparison.Ordinal);
    }

    [Fact]
    public void EveryTruncationAndSingleByteCorruptionIsRejectedOrDecodesToAValidDescription()
    {
        var bytes = JobDescriptionCodec.Encode(Sample());
        for (int length = 0; length < bytes.Length; length++)
        {
            Assert.False(JobDescriptionCodec.TryDecode(bytes.AsSpan(0, length), out _, out string? error));
            Assert.False(string.IsNullOrEmpty(error));
        }
        int rejected = 0;
        for (int i = 0; i < bytes.Length; i++)
        {
            var copy = (byte[])bytes.Clone();
            copy[i] ^= 0xA5;
            if (JobDescriptionCodec.TryDecode(copy, out var decoded, out _))
            {
                decoded!.Validate(0); // whatever decodes is a valid description
            }
            else
            {
                rejected++;
            }
        }
        Assert.True(rejected > bytes.Length / 3, $"only {rejected} of {bytes.Length} corruptions were rejected");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-3)]
    public void BadFieldsGiveClearErrors(int reduceTasks)
    {
        var bad = Sample() with { ReduceTasks = reduceTasks };
        var bytes = JobDescriptionCodec.Encode(bad);
        Assert.False(JobDescriptionCodec.TryDecode(bytes, out _, out string? error));
        Assert.Contains("R =", error, StringComparison.Ordinal);
        var escape = Sample() with { Input = new InputDescription("../../etc/passwd") };
        Assert.False(JobDescriptionCodec.TryDecode(JobDescriptionCodec.Encode(escape), out _, out error));
        Assert.Contains("inside the data directory", error, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => Sample().Validate(servers: 8)); // R = 27 > 8 servers
    }

    [Fact]
    public void AJobWithoutATreeFamilyRunsOnTheShallowTreesAndAnUnknownFamilyOrReservedByteIsRefused()
    {
        var plain = Sample() with { Trees = default };
        Assert.True(JobDescriptionCodec.TryDecode(JobDescriptionCodec.Encode(plain), out var decoded, out _));
        Assert.Equal(TreeFamily.Shallow, decoded!.Trees);

        var bytes = JobDescriptionCodec.Encode(Sample());
        bytes[32] = 7;
        Assert.False(JobDescriptionCodec.TryDecode(bytes, out _, out string? error));
        Assert.Contains("tree family", error, StringComparison.Ordinal);

        bytes = JobDescriptionCodec.Encode(Sample());
        bytes[37] = 1;
        Assert.False(JobDescriptionCodec.TryDecode(bytes, out _, out error));
        Assert.Contains("reserved", error, StringComparison.Ordinal);

        // Byte 33 holds flags: bit 0 replicates the output, bit 1 places the roots, bit 2 pushes; any other bit is refused.
        bytes = JobDescriptionCodec.Encode(Sample());
        Assert.Equal(0, bytes[33]);
        bytes[33] = 8;
        Assert.False(JobDescriptionCodec.TryDecode(bytes, out _, out error));
        Assert.Contains("reserved", error, StringComparison.Ordinal);
        bytes = JobDescriptionCodec.Encode(Sample() with { ReplicateOutput = true });
        Assert.Equal(1, bytes[33]);
        Assert.True(JobDescriptionCodec.TryDecode(bytes, out decoded, out error), error);
        Assert.True(decoded!.ReplicateOutput);
    }

    [Fact]
    public void AdmissionSettingsRoundTripAndPushWithParallelFetchesIsRefused()
    {
        var fetching = Sample() with { Mode = ShuffleMode.Tcp, ParallelFetches = 300 };
        var bytes = JobDescriptionCodec.Encode(fetching);
        Assert.Equal((0, 300), (bytes[33], (bytes[34] << 8) | bytes[35]));
        Assert.True(JobDescriptionCodec.TryDecode(bytes, out var decoded, out string? error), error);
        Assert.Equal((300, false), (decoded!.ParallelFetches, decoded.Push));

        bytes = JobDescriptionCodec.Encode(Sample() with { Mode = ShuffleMode.Tcp, Push = true });
        Assert.Equal(4, bytes[33]);
        Assert.True(JobDescriptionCodec.TryDecode(bytes, out decoded, out error), error);
        Assert.Equal((0, true), (decoded!.ParallelFetches, decoded.Push));

        var both = Assert.Throws<ArgumentException>(() => (fetching with { Push = true }).Validate(27));
        Assert.Contains("parallel fetches", both.Message, StringComparison.Ordinal);
        var tooMany = Assert.Throws<ArgumentException>(() => (fetching with { ParallelFetches = 70_000 }).Validate(27));
        Assert.Contains("out of range", tooMany.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void PlacedRootsRoundTripAfterTheStringsAndABadPlacementIsRefused()
    {
        var roots = Enumerable.Range(0, 27).Select(r => (r * 5) % 27).ToArray();
        var placed = Sample() with { Roots = roots };
        var bytes = JobDescriptionCodec.Encode(placed);
        var plain = JobDescriptionCodec.Encode(Sample());
        // Flag bit 1, then the roots as i32s after the last string: 4 bytes per reduce task.
        Assert.Equal(2, bytes[33]);
        Assert.Equal(plain.Length + (4 * 27), bytes.Length);
        Assert.Equal(new byte[] { 0, 0, 0, 5 }, bytes[(plain.Length + 4)..(plain.Length + 8)]);
        Assert.True(JobDescriptionCodec.TryDecode(bytes, out var decoded, out string? error), error);
        Assert.Equal(roots, decoded!.Roots);
        Assert.True(JobDescriptionCodec.TryDecode(plain, out decoded, out _));
        Assert.Null(decoded!.Roots);

        // The flag without the roots, or one root short, is refused.
        var flagOnly = (byte[])plain.Clone();
        flagOnly[33] = 2;
        Assert.False(JobDescriptionCodec.TryDecode(flagOnly, out _, out error));
        Assert.Contains("root placement", error, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => JobDescriptionCodec.Encode(Sample() with { Roots = roots[..26] }));

        // Two reduce tasks on one server, or a root beyond the cube, are not a placement.
        var twice = Sample() with { Roots = [.. roots[..26], roots[0]] };
        Assert.False(JobDescriptionCodec.TryDecode(JobDescriptionCodec.Encode(twice), out _, out error));
        Assert.Contains("at most one per server", error, StringComparison.Ordinal);
        var outside = Sample() with { Roots = [.. roots[..26], 27] };
        Assert.Throws<ArgumentException>(() => outside.Validate(servers: 27));
        outside.Validate(servers: 0); // the decoder does not know the cube: the server checks it
    }
}

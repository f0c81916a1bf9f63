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
        bytes[35] = 1;
        Assert.False(JobDescriptionCodec.TryDecode(bytes, out _, out error));
        Assert.Contains("reserved", error, StringComparison.Ordinal);
    }
}

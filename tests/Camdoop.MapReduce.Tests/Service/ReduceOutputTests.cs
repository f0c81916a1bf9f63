using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Service;
using Camdoop.Records;

namespace Camdoop.MapReduce.Tests.Service;

public sealed class ReduceOutputTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-out-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void RecordsSplitAnywhereAreFormattedCountedAndChecksummed()
    {
        var job = new WordCountJob();
        var random = new Random(3);
        var stream = new MemoryStream();
        var expected = new System.Text.StringBuilder();
        var record = new byte[400];
        long logical = 0;
        for (int i = 0; i < 2000; i++)
        {
            // Keys of 1 to 300 bytes: some with two-byte length varints.
            string word = new('a', 1 + random.Next(300));
            word += i.ToString(System.Globalization.CultureInfo.InvariantCulture);
            var value = new byte[8];
            System.Buffers.Binary.BinaryPrimitives.WriteUInt64BigEndian(value, (ulong)i);
            stream.Write(record, 0, RecordCodec.Write(record, System.Text.Encoding.ASCII.GetBytes(word), value));
            expected.Append(word).Append('\t').Append(i).Append('\n');
            logical += word.Length + 8;
        }
        var bytes = stream.ToArray();
        string path = Path.Combine(_directory, ReduceOutput.PartName(3));
        using (var output = new ReduceOutput(job, path))
        {
            int position = 0;
            while (position < bytes.Length)
            {
                int n = Math.Min(bytes.Length - position, random.Next(4) == 0 ? 1 : random.Next(1, 700));
                output.Write(bytes.AsSpan(position, n));
                position += n;
            }
            output.Complete();
            Assert.Equal(2000, output.Records);
            Assert.Equal(logical, output.LogicalBytes);
            Assert.Equal(XxHash64.Hash(bytes), output.Checksum);
        }
        Assert.EndsWith("part-00003", path, StringComparison.Ordinal);
        Assert.Equal(expected.ToString(), File.ReadAllText(path));
    }

    [Theory]
    [InlineData(0.3)]
    [InlineData(0.8)]
    public void AReplicaTakenOverHoldsWholeKeyGroupsAndGoesOnToTheWholeOutput(double cut)
    {
        // Sorted records, each key one to three times (equal keys: a reduce that emits several records per key).
        var job = new WordCountJob();
        var random = new Random(11);
        var records = new List<(string Key, byte[] Record)>();
        var record = new byte[64];
        for (int i = 0; i < 3000; i++)
        {
            string key = i.ToString("D6", System.Globalization.CultureInfo.InvariantCulture);
            for (int copies = 1 + random.Next(3), c = 0; c < copies; c++)
            {
                var value = new byte[8];
                System.Buffers.Binary.BinaryPrimitives.WriteUInt64BigEndian(value, (ulong)c);
                records.Add((key, record.AsSpan(0, RecordCodec.Write(record, System.Text.Encoding.ASCII.GetBytes(key), value)).ToArray()));
            }
        }
        var whole = records.SelectMany(r => r.Record).ToArray();
        string path = Path.Combine(_directory, "part-00000.replica");
        string final = Path.Combine(_directory, ReduceOutput.PartName(0));
        var replica = ReduceOutput.ForReplica(job, path);
        int sent = (int)(whole.Length * cut);
        for (int position = 0; position < sent;)
        {
            int n = Math.Min(sent - position, random.Next(1, 500));
            replica.Write(whole.AsSpan(position, n));
            position += n;
        }
        var point = replica.TakeOver(final);

        // It resumes after every record of the last key it applied; the group cut by the failure is not held.
        Assert.True(point.HasKey);
        Assert.Equal(Camdoop.MapReduce.Shuffle.ResumePoint.SkipAll, point.Skip);
        // Records wholly received, and of them the groups the replica knows are complete: all but the last key's.
        int complete = 0;
        for (long end = 0; complete < records.Count && (end += records[complete].Record.Length) <= sent;)
        {
            complete++;
        }
        int held = records.FindIndex(r => r.Key == records[complete - 1].Key);
        Assert.Equal(records[held - 1].Key, System.Text.Encoding.ASCII.GetString(point.Key));
        Assert.Equal(held, replica.Records);
        Assert.False(File.Exists(path));

        // The records after the point, written on, give exactly the output of the whole stream.
        foreach (var (_, bytes) in records.Skip(held))
        {
            replica.Write(bytes);
        }
        replica.Complete();
        replica.Dispose();
        Assert.Equal(records.Count, replica.Records);
        Assert.Equal(XxHash64.Hash(whole), replica.Checksum);
        using var reference = new ReduceOutput(job, Path.Combine(_directory, "reference"));
        reference.Write(whole);
        reference.Complete();
        reference.Dispose();
        Assert.Equal(File.ReadAllText(Path.Combine(_directory, "reference")), File.ReadAllText(final));
    }

    [Fact]
    public void AStreamEndingInsideARecordIsAnError()
    {
        var output = new ReduceOutput(new WordCountJob(), null);
        var record = new byte[32];
        int n = RecordCodec.Write(record, "word"u8, new byte[8]);
        output.Write(record.AsSpan(0, n - 1));
        Assert.Throws<InvalidDataException>(output.Complete);
    }
}

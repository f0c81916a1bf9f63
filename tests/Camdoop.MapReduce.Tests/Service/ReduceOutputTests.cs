using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Service;

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

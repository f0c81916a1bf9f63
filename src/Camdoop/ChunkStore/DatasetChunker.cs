namespace Camdoop.ChunkStore;

/// <summary>One chunk's byte range in the input file.</summary>
public readonly record struct ChunkRange(long Offset, long Length);

/// <summary>
/// Cuts a dataset file into chunks without ever splitting a record: a text line stays whole (a chunk ends just after
/// a '\n'), a fixed-size record stays whole (chunk lengths are multiples of the record size). Chunks are at most
/// about <c>chunkSize</c> (plus the rest of a line), but a file smaller than servers x chunk size is cut into exactly
/// one chunk per server, so that every server has a map task (as the Camdoop paper's 27-server runs give each
/// server one input file, §5.1). Sizes are balanced: boundaries start at equal fractions of the file.
/// </summary>
public static class DatasetChunker
{
    public static IReadOnlyList<ChunkRange> Split(Stream file, DatasetFormat format, int recordSize, long chunkSize, int servers)
    {
        ArgumentNullException.ThrowIfNull(file);
        ArgumentOutOfRangeException.ThrowIfLessThan(chunkSize, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(servers, 1);
        if (!file.CanSeek)
        {
            throw new ArgumentException("the dataset file must be seekable", nameof(file));
        }
        long length = file.Length;
        if (format == DatasetFormat.Records)
        {
            if (recordSize < 1)
            {
                throw new ArgumentOutOfRangeException(nameof(recordSize), "fixed-size records need a record size");
            }
            if (length % recordSize != 0)
            {
                throw new InvalidDataException($"the file's {length} bytes are not a whole number of {recordSize}-byte records");
            }
        }
        long count = length < servers * chunkSize ? servers : (length + chunkSize - 1) / chunkSize;
        if (count > DatasetManifest.MaxChunks)
        {
            throw new InvalidDataException($"the file would need {count} chunks, more than {DatasetManifest.MaxChunks}; use a larger chunk size");
        }
        var starts = new long[count + 1];
        starts[count] = length;
        for (long i = 1; i < count; i++)
        {
            long nominal = (long)((UInt128)(ulong)length * (ulong)i / (ulong)count);
            long boundary = format == DatasetFormat.Records
                ? nominal / recordSize * recordSize
                : AfterNextNewline(file, nominal, length);
            starts[i] = Math.Max(boundary, starts[i - 1]);
        }
        var ranges = new ChunkRange[count];
        for (long i = 0; i < count; i++)
        {
            ranges[i] = new ChunkRange(starts[i], starts[i + 1] - starts[i]);
            if (ranges[i].Length > ChunkMeta.MaxChunkBytes)
            {
                throw new InvalidDataException($"chunk {i} would be {ranges[i].Length} bytes (a line longer than the chunk size?), more than the {ChunkMeta.MaxChunkBytes}-byte limit");
            }
        }
        return ranges;
    }

    /// <summary>The offset just after the first '\n' at or after <paramref name="from"/> - 1 (so a boundary right after a newline stays put).</summary>
    private static long AfterNextNewline(Stream file, long from, long length)
    {
        if (from == 0)
        {
            return 0;
        }
        var buffer = new byte[64 * 1024];
        long position = from - 1;
        file.Seek(position, SeekOrigin.Begin);
        while (position < length)
        {
            int n = file.Read(buffer, 0, (int)Math.Min(buffer.Length, length - position));
            if (n <= 0)
            {
                break;
            }
            int newline = Array.IndexOf(buffer, (byte)'\n', 0, n);
            if (newline >= 0)
            {
                return position + newline + 1;
            }
            position += n;
        }
        return length;
    }
}

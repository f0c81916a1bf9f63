using Camdoop.KeyRouting;

namespace Camdoop.JobControl.Wire;

/// <summary>
/// A reduce task's result as reported to the coordinator: its size and checksum, and where its output is (a file on
/// the root's disk, relative to its data directory, or a chunk of the output dataset; neither when discarded).
/// </summary>
public sealed record ReduceReport(int ReduceTask, long Records, long LogicalBytes, long FileBytes, ulong Checksum, string? OutputPath, Key? Chunk, long ChunkLength, ulong ChunkChecksum)
{
    /// <summary>Whether the output survives its root server: stored as a replicated chunk, or not kept at all.</summary>
    public bool OutlivesItsServer => Chunk is not null || OutputPath is null;

    public void Write(ControlWire.Writer w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.U32((uint)ReduceTask);
        w.I64(Records);
        w.I64(LogicalBytes);
        w.I64(FileBytes);
        w.U64(Checksum);
        w.OptionalString(OutputPath);
        w.Bool(Chunk is not null);
        if (Chunk is { } chunk)
        {
            w.Key(chunk);
            w.I64(ChunkLength);
            w.U64(ChunkChecksum);
        }
    }

    public static ReduceReport Read(ref ControlWire.Reader r)
    {
        int task = (int)r.U32();
        long records = r.I64(), logical = r.I64(), fileBytes = r.I64();
        ulong checksum = r.U64();
        string? path = r.OptionalString();
        bool stored = r.Bool();
        Key? chunk = stored ? r.Key() : null;
        long length = stored ? r.I64() : 0;
        ulong chunkChecksum = stored ? r.U64() : 0;
        if (task < 0)
        {
            r.Fail();
        }
        return new ReduceReport(task, records, logical, fileBytes, checksum, path, chunk, length, chunkChecksum);
    }
}

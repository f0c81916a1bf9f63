using System.Globalization;
using Camdoop.KeyRouting;
using Camdoop.Records;

namespace Camdoop.ChunkStore;

public enum ReplicaHealth
{
    Good,
    Missing,
    Corrupt,
}

/// <summary>A replica this server holds.</summary>
public sealed record StoredChunk(ChunkMeta Meta, string DataPath)
{
    /// <summary>Set when a read or the scrubber found the bytes do not match the checksum; cleared by a repair.</summary>
    public bool Corrupt { get; set; }

    /// <summary>
    /// Whether the bytes were checked against the checksum since this server started: written (a write checks before
    /// it commits), read or scrubbed. <see cref="Corrupt"/> is the result of the last check.
    /// </summary>
    public bool Checked { get; set; }

    /// <summary>What the last check found: what fsck reports of this replica.</summary>
    public ReplicaState State => Corrupt ? ReplicaState.Corrupt : Checked ? ReplicaState.Good : ReplicaState.Unchecked;
}

/// <summary>A held replica as its last check left it (fsck's view; <see cref="ChunkWire"/> carries it as a byte).</summary>
public enum ReplicaState : byte
{
    /// <summary>Not checked since the server started (loaded from disk, not yet scrubbed or read): presumed good.</summary>
    Unchecked = 0,
    Good = 1,
    Corrupt = 2,

    /// <summary>Still in the server's index, but its data file is gone (found when fsck asked): no replica at all.</summary>
    Missing = 3,
}

/// <summary>
/// The replicas one server holds, under &lt;data&gt;/chunks: &lt;id&gt;.data (the chunk's bytes, exactly what the
/// map task reads) and &lt;id&gt;.meta (its <see cref="ChunkMeta"/>). A replica is written to a temporary file (disk
/// space reserved first) and committed only after its checksum matched: data and metadata are fsynced, renamed into
/// place and the directory fsynced, so a replica that was acknowledged survives a crash, and a crash before that
/// leaves only temporary files, removed by <see cref="Open"/>. Reads verify the checksum, so a replica that was
/// damaged on disk is never served. The index is single-threaded (the chunk store service's event loop); the file
/// work of a commit (<see cref="WriteFiles"/>, <see cref="CommitFiles"/>) is safe off the loop.
/// </summary>
public sealed class LocalChunkStore
{
    private const string TempSuffix = ".part";

    private readonly Dictionary<Key, StoredChunk> _chunks = [];
    private readonly byte[] _verifyBuffer = new byte[CheckBufferBytes];
    private long _tempCounter;

    /// <summary>The block size <see cref="CheckFile"/> reads in.</summary>
    public const int CheckBufferBytes = 256 * 1024;

    public LocalChunkStore(string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(dataDirectory);
        Directory = Path.Combine(dataDirectory, "chunks");
    }

    public string Directory { get; }

    public int Count => _chunks.Count;

    public long BytesStored { get; private set; }

    public IEnumerable<StoredChunk> All => _chunks.Values;

    /// <summary>
    /// Loads the replicas left by an earlier run. Removes what a crash can leave behind: temporary files of writes
    /// that never committed, and data whose metadata was never renamed into place (a commit cut between its two
    /// renames); metadata without data, or unreadable, is ignored.
    /// </summary>
    public void Open()
    {
        System.IO.Directory.CreateDirectory(Directory);
        foreach (var path in System.IO.Directory.EnumerateFiles(Directory))
        {
            string name = Path.GetFileName(path);
            if (name.Contains(TempSuffix, StringComparison.Ordinal)
                || (name.EndsWith(".data", StringComparison.Ordinal) && !File.Exists(Path.ChangeExtension(path, ".meta"))))
            {
                File.Delete(path);
            }
        }
        foreach (var metaPath in System.IO.Directory.EnumerateFiles(Directory, "*.meta"))
        {
            var dataPath = Path.ChangeExtension(metaPath, ".data");
            if (!File.Exists(dataPath) || !ChunkMeta.TryRead(File.ReadAllBytes(metaPath), out var meta, out _) || DataPath(meta!.Id) != dataPath)
            {
                continue;
            }
            _chunks[meta.Id] = new StoredChunk(meta, dataPath);
            BytesStored += meta.Length;
        }
    }

    public bool TryGet(in Key id, out StoredChunk chunk) => _chunks.TryGetValue(id, out chunk!);

    /// <summary>Whether a replica of exactly these bytes (length and checksum) is held and not known to be corrupt.</summary>
    public bool Holds(ChunkMeta meta)
    {
        ArgumentNullException.ThrowIfNull(meta);
        return _chunks.TryGetValue(meta.Id, out var held) && !held.Corrupt && held.Meta.Checksum == meta.Checksum && held.Meta.Length == meta.Length;
    }

    public string DataPath(in Key id) => Path.Combine(Directory, id + ".data");

    /// <summary>
    /// Starts writing a replica into a temporary file with its disk space reserved. An IOException when the file
    /// cannot be created; <see cref="StorageErrors.IsDiskFull"/> tells a full disk. Safe off the loop.
    /// </summary>
    public FileChunkSink BeginWrite(ChunkMeta meta)
    {
        ArgumentNullException.ThrowIfNull(meta);
        long n = Interlocked.Increment(ref _tempCounter);
        string temp = Path.Combine(Directory, string.Create(CultureInfo.InvariantCulture, $"{meta.Id}.{n}{TempSuffix}"));
        return new FileChunkSink(temp, meta);
    }

    /// <summary>
    /// Makes a fully written and checked replica durable and visible on disk (off the loop): flushes its bytes,
    /// writes and flushes its metadata, renames both into place and flushes the directory. On an IOException the
    /// temporary files are removed and nothing changed. <see cref="Register"/> then records it, on the loop.
    /// </summary>
    public void CommitFiles(FileChunkSink sink)
    {
        ArgumentNullException.ThrowIfNull(sink);
        var meta = sink.Meta;
        string metaTemp = sink.Path + ".meta";
        try
        {
            sink.Flush();
            sink.Dispose();
            using (var stream = new FileStream(metaTemp, FileMode.Create, FileAccess.Write))
            {
                stream.Write(meta.ToBytes());
                stream.Flush(flushToDisk: true);
            }
            string dataPath = DataPath(meta.Id);
            // Data first: a crash between the renames leaves new data beside old metadata, which the checksum on
            // read reports as corrupt (and a read repairs), or data without metadata, which Open removes.
            File.Move(sink.Path, dataPath, overwrite: true);
            File.Move(metaTemp, Path.ChangeExtension(dataPath, ".meta"), overwrite: true);
            NativeFiles.SyncDirectory(Directory);
        }
        catch (IOException)
        {
            sink.Abort();
            File.Delete(metaTemp);
            throw;
        }
    }

    /// <summary>Records a replica <see cref="CommitFiles"/> made durable, replacing an older one (on the loop).</summary>
    public StoredChunk Register(ChunkMeta meta)
    {
        ArgumentNullException.ThrowIfNull(meta);
        if (_chunks.Remove(meta.Id, out var old))
        {
            BytesStored -= old.Meta.Length;
        }
        // Its bytes were checked against the checksum on their way in (a transfer, or WriteFiles).
        var stored = new StoredChunk(meta, DataPath(meta.Id)) { Checked = true };
        _chunks[meta.Id] = stored;
        BytesStored += meta.Length;
        return stored;
    }

    /// <summary>Commits and registers at once, for callers that may block (tests, tools).</summary>
    public StoredChunk Commit(FileChunkSink sink)
    {
        CommitFiles(sink);
        return Register(sink.Meta);
    }

    /// <summary>
    /// Writes a whole replica from <paramref name="source"/> and makes it durable (off the loop; then
    /// <see cref="Register"/> on the loop). Throws an IOException when the disk fails or is full, or when the bytes do
    /// not match the checksum; nothing is left behind then.
    /// </summary>
    public void WriteFiles(ChunkMeta meta, IChunkSource source)
    {
        ArgumentNullException.ThrowIfNull(meta);
        ArgumentNullException.ThrowIfNull(source);
        var sink = BeginWrite(meta);
        try
        {
            var hash = new XxHash64();
            var buffer = new byte[256 * 1024];
            long offset = 0;
            while (offset < meta.Length)
            {
                int n = source.Read(offset, buffer.AsSpan(0, (int)Math.Min(buffer.Length, meta.Length - offset)));
                if (n <= 0)
                {
                    break;
                }
                sink.Write(offset, buffer.AsSpan(0, n));
                hash.Append(buffer.AsSpan(0, n));
                offset += n;
            }
            if (offset != meta.Length || hash.GetDigest() != meta.Checksum)
            {
                throw new IOException("the bytes do not match the chunk's checksum");
            }
        }
        catch (IOException)
        {
            sink.Abort();
            throw;
        }
        CommitFiles(sink);
    }

    /// <summary>Writes a whole replica here and records it, blocking (tests, tools); false with the reason on failure.</summary>
    public bool TryWriteLocal(ChunkMeta meta, IChunkSource source, out string? error)
    {
        ArgumentNullException.ThrowIfNull(meta);
        if (Holds(meta))
        {
            error = null;
            return true;
        }
        try
        {
            WriteFiles(meta, source);
        }
        catch (IOException e)
        {
            error = e.Message;
            return false;
        }
        Register(meta);
        error = null;
        return true;
    }

    /// <summary>Reads the whole replica and checks it against its checksum; a mismatch marks it corrupt (on the loop).</summary>
    public ReplicaHealth Verify(in Key id)
    {
        if (!_chunks.TryGetValue(id, out var chunk))
        {
            return ReplicaHealth.Missing;
        }
        var health = CheckFile(chunk.DataPath, chunk.Meta, _verifyBuffer);
        if (health == ReplicaHealth.Missing)
        {
            _chunks.Remove(id);
            BytesStored -= chunk.Meta.Length;
            return ReplicaHealth.Missing;
        }
        chunk.Corrupt = health == ReplicaHealth.Corrupt;
        chunk.Checked = true;
        return health;
    }

    /// <summary>
    /// Reads the file <paramref name="path"/> block by block into <paramref name="buffer"/> and checks it against
    /// <paramref name="meta"/>'s length and checksum. Touches no state of the store: safe off the loop (the scrubber).
    /// Missing when the file is gone; Corrupt when it differs or cannot be read.
    /// </summary>
    public static ReplicaHealth CheckFile(string path, ChunkMeta meta, byte[] buffer)
    {
        ArgumentNullException.ThrowIfNull(path);
        ArgumentNullException.ThrowIfNull(meta);
        ArgumentNullException.ThrowIfNull(buffer);
        try
        {
            using var source = new FileChunkSource(path);
            if (source.Length != meta.Length)
            {
                return ReplicaHealth.Corrupt;
            }
            var hash = new XxHash64();
            long offset = 0;
            while (offset < source.Length)
            {
                int n = source.Read(offset, buffer);
                if (n <= 0)
                {
                    break;
                }
                hash.Append(buffer.AsSpan(0, n));
                offset += n;
            }
            return offset == meta.Length && hash.GetDigest() == meta.Checksum ? ReplicaHealth.Good : ReplicaHealth.Corrupt;
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            return ReplicaHealth.Missing;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return ReplicaHealth.Corrupt;
        }
    }

    /// <summary>
    /// Forgets every replica of <paramref name="dataset"/> (manifest and data chunks) on the loop, so none is served or
    /// listed again; the caller deletes their files (<see cref="DeleteFiles"/>, off the loop).
    /// </summary>
    public List<StoredChunk> RemoveDataset(string dataset)
    {
        var removed = _chunks.Values.Where(c => c.Meta.Dataset == dataset).ToList();
        foreach (var chunk in removed)
        {
            _chunks.Remove(chunk.Meta.Id);
            BytesStored -= chunk.Meta.Length;
        }
        return removed;
    }

    /// <summary>Forgets one replica (held three times elsewhere) on the loop; the caller deletes its files off it.</summary>
    public bool Forget(in Key id, out StoredChunk chunk)
    {
        if (!_chunks.Remove(id, out chunk!))
        {
            return false;
        }
        BytesStored -= chunk.Meta.Length;
        return true;
    }

    /// <summary>
    /// Deletes a removed replica's files: the metadata first, so a crash in between leaves data without metadata,
    /// which <see cref="Open"/> removes. Safe off the loop.
    /// </summary>
    public static void DeleteFiles(StoredChunk chunk)
    {
        ArgumentNullException.ThrowIfNull(chunk);
        File.Delete(Path.ChangeExtension(chunk.DataPath, ".meta"));
        File.Delete(chunk.DataPath);
    }

    /// <summary>Manifests stored here, by dataset name.</summary>
    public List<ChunkMeta> Manifests() =>
        [.. _chunks.Values.Where(c => c.Meta.Kind == ChunkKind.Manifest).Select(c => c.Meta).OrderBy(m => m.Dataset, StringComparer.Ordinal)];
}

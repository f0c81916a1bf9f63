using System.Globalization;
using System.Runtime.InteropServices;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Records;

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
    /// <summary>Set when a read found the bytes do not match the checksum; cleared by a repair.</summary>
    public bool Corrupt { get; set; }
}

/// <summary>
/// The replicas one server holds, under &lt;data&gt;/chunks: &lt;id&gt;.data (the chunk's bytes, exactly what the
/// map task reads) and &lt;id&gt;.meta (its <see cref="ChunkMeta"/>). A replica is written to a temporary file and
/// committed only after its checksum matched: data and metadata are fsynced, renamed into place and the directory
/// fsynced, so a replica that was acknowledged survives a crash. Reads verify the checksum on demand.
/// Single-threaded (the chunk store service's event loop).
/// </summary>
public sealed partial class LocalChunkStore
{
    private readonly Dictionary<Key, StoredChunk> _chunks = [];
    private long _tempCounter;

    public LocalChunkStore(string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(dataDirectory);
        Directory = Path.Combine(dataDirectory, "chunks");
    }

    public string Directory { get; }

    public int Count => _chunks.Count;

    public long BytesStored { get; private set; }

    public IEnumerable<StoredChunk> All => _chunks.Values;

    /// <summary>Loads the replicas left by an earlier run; drops unfinished temporary files and metadata without data.</summary>
    public void Open()
    {
        System.IO.Directory.CreateDirectory(Directory);
        foreach (var part in System.IO.Directory.EnumerateFiles(Directory, "*.part"))
        {
            File.Delete(part);
        }
        foreach (var metaPath in System.IO.Directory.EnumerateFiles(Directory, "*.meta"))
        {
            var dataPath = Path.ChangeExtension(metaPath, ".data");
            if (!File.Exists(dataPath) || !ChunkMeta.TryRead(File.ReadAllBytes(metaPath), out var meta, out _))
            {
                continue;
            }
            _chunks[meta!.Id] = new StoredChunk(meta, dataPath);
            BytesStored += meta.Length;
        }
    }

    public bool TryGet(in Key id, out StoredChunk chunk) => _chunks.TryGetValue(id, out chunk!);

    public string DataPath(in Key id) => Path.Combine(Directory, id + ".data");

    /// <summary>Starts writing a replica into a temporary file.</summary>
    public FileChunkSink BeginWrite(ChunkMeta meta)
    {
        ArgumentNullException.ThrowIfNull(meta);
        string temp = Path.Combine(Directory, string.Create(CultureInfo.InvariantCulture, $"{meta.Id}.{++_tempCounter}.part"));
        return new FileChunkSink(temp, meta);
    }

    /// <summary>Makes a fully written and checked replica durable and visible, replacing an older one.</summary>
    public StoredChunk Commit(FileChunkSink sink)
    {
        ArgumentNullException.ThrowIfNull(sink);
        var meta = sink.Meta;
        sink.Flush();
        sink.Dispose();
        string dataPath = DataPath(meta.Id);
        string metaPath = Path.ChangeExtension(dataPath, ".meta");
        string metaTemp = sink.Path + ".meta";
        using (var stream = new FileStream(metaTemp, FileMode.Create, FileAccess.Write))
        {
            stream.Write(meta.ToBytes());
            stream.Flush(flushToDisk: true);
        }
        File.Move(sink.Path, dataPath, overwrite: true);
        File.Move(metaTemp, metaPath, overwrite: true);
        SyncDirectory(Directory);
        if (_chunks.Remove(meta.Id, out var old))
        {
            BytesStored -= old.Meta.Length;
        }
        var stored = new StoredChunk(meta, dataPath);
        _chunks[meta.Id] = stored;
        BytesStored += meta.Length;
        return stored;
    }

    /// <summary>Writes a whole replica from <paramref name="source"/> here (this server is one of the targets).</summary>
    public bool TryWriteLocal(ChunkMeta meta, IChunkSource source, out string? error)
    {
        ArgumentNullException.ThrowIfNull(meta);
        ArgumentNullException.ThrowIfNull(source);
        if (_chunks.TryGetValue(meta.Id, out var existing) && !existing.Corrupt && existing.Meta.Checksum == meta.Checksum && existing.Meta.Length == meta.Length)
        {
            error = null;
            return true;
        }
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
                sink.Abort();
                error = "the bytes do not match the chunk's checksum";
                return false;
            }
            Commit(sink);
            error = null;
            return true;
        }
        catch (IOException e)
        {
            sink.Abort();
            error = e.Message;
            return false;
        }
    }

    /// <summary>Reads the whole replica and checks it against its checksum; a mismatch marks it corrupt.</summary>
    public ReplicaHealth Verify(in Key id)
    {
        if (!_chunks.TryGetValue(id, out var chunk))
        {
            return ReplicaHealth.Missing;
        }
        try
        {
            using var source = new FileChunkSource(chunk.DataPath);
            if (source.Length != chunk.Meta.Length)
            {
                chunk.Corrupt = true;
                return ReplicaHealth.Corrupt;
            }
            var hash = new XxHash64();
            var buffer = new byte[256 * 1024];
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
            chunk.Corrupt = offset != chunk.Meta.Length || hash.GetDigest() != chunk.Meta.Checksum;
        }
        catch (FileNotFoundException)
        {
            _chunks.Remove(id);
            BytesStored -= chunk.Meta.Length;
            return ReplicaHealth.Missing;
        }
        catch (IOException)
        {
            chunk.Corrupt = true;
        }
        return chunk.Corrupt ? ReplicaHealth.Corrupt : ReplicaHealth.Good;
    }

    /// <summary>Manifests stored here, by dataset name.</summary>
    public List<ChunkMeta> Manifests() =>
        [.. _chunks.Values.Where(c => c.Meta.Kind == ChunkKind.Manifest).Select(c => c.Meta).OrderBy(m => m.Dataset, StringComparer.Ordinal)];

    private static void SyncDirectory(string path)
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }
        int fd = Open(path, ORdOnly | ODirectory | OCloexec);
        if (fd >= 0)
        {
            FSync(fd);
            Close(fd);
        }
    }

    private const int ORdOnly = 0;
    private const int ODirectory = 0x10000;
    private const int OCloexec = 0x80000;

    [LibraryImport("libc", EntryPoint = "open", StringMarshalling = StringMarshalling.Utf8, SetLastError = true)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static partial int FSync(int fd);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int Close(int fd);
}

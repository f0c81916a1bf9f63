using Microsoft.Win32.SafeHandles;

namespace Camdoop.ChunkStore;

/// <summary>Where a transfer's sender reads the chunk's bytes: memory (a front-end upload) or a stored replica.</summary>
public interface IChunkSource : IDisposable
{
    long Length { get; }

    /// <summary>Copies bytes at <paramref name="offset"/> into <paramref name="destination"/>; returns how many (less only at the end).</summary>
    int Read(long offset, Span<byte> destination);
}

/// <summary>Where a transfer's receiver puts the bytes, in order: a replica file being written, or memory (a read).</summary>
public interface IChunkSink : IDisposable
{
    void Write(long offset, ReadOnlySpan<byte> bytes);
}

public sealed class MemoryChunkSource(ReadOnlyMemory<byte> bytes) : IChunkSource
{
    public long Length => bytes.Length;

    public int Read(long offset, Span<byte> destination)
    {
        int n = (int)Math.Min(destination.Length, bytes.Length - offset);
        bytes.Span.Slice((int)offset, n).CopyTo(destination);
        return n;
    }

    public void Dispose()
    {
    }
}

/// <summary>Reads a stored replica by position (no shared file pointer, so several transfers may read one file).</summary>
public sealed class FileChunkSource : IChunkSource
{
    private readonly SafeFileHandle _handle;

    public FileChunkSource(string path)
    {
        _handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read | FileShare.Delete);
        Length = RandomAccess.GetLength(_handle);
    }

    public long Length { get; }

    public int Read(long offset, Span<byte> destination)
    {
        int total = 0;
        while (total < destination.Length && offset + total < Length)
        {
            int n = RandomAccess.Read(_handle, destination[total..], offset + total);
            if (n == 0)
            {
                break;
            }
            total += n;
        }
        return total;
    }

    public void Dispose() => _handle.Dispose();
}

public sealed class MemoryChunkSink(long length) : IChunkSink
{
    private byte[]? _bytes = length <= Array.MaxLength ? new byte[length] : throw new ArgumentOutOfRangeException(nameof(length));

    /// <summary>Hands the bytes over; the sink forgets them (a finished transfer lingers, its bytes need not).</summary>
    public byte[] Take()
    {
        var bytes = _bytes ?? throw new InvalidOperationException("the bytes were already taken");
        _bytes = null;
        return bytes;
    }

    public void Write(long offset, ReadOnlySpan<byte> bytes) =>
        bytes.CopyTo((_bytes ?? throw new InvalidOperationException("the bytes were already taken")).AsSpan((int)offset));

    public void Dispose()
    {
    }
}

/// <summary>Writes a replica into a temporary file; <see cref="LocalChunkStore.CommitFiles"/> makes it durable and visible.</summary>
public sealed class FileChunkSink : IChunkSink
{
    private readonly SafeFileHandle _handle;
    private bool _disposed;

    internal FileChunkSink(string path, ChunkMeta meta)
    {
        Path = path;
        Meta = meta;
        _handle = File.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite, FileShare.Read);
        try
        {
            NativeFiles.Reserve(_handle, path, meta.Length);
        }
        catch (IOException)
        {
            Abort();
            throw;
        }
    }

    public string Path { get; }

    public ChunkMeta Meta { get; }

    public void Write(long offset, ReadOnlySpan<byte> bytes) => RandomAccess.Write(_handle, bytes, offset);

    /// <summary>Forces the bytes to the disk.</summary>
    internal void Flush() => RandomAccess.FlushToDisk(_handle);

    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            _handle.Dispose();
        }
    }

    /// <summary>Closes and deletes the temporary file (the transfer failed or was abandoned).</summary>
    public void Abort()
    {
        Dispose();
        File.Delete(Path);
    }
}

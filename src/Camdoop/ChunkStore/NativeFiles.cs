using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Camdoop.ChunkStore;

/// <summary>The two file-system calls .NET lacks that a durable replica needs, through libc (Linux only).</summary>
internal static partial class NativeFiles
{
    private const int ORdOnly = 0;
    private const int ODirectory = 0x10000;
    private const int OCloexec = 0x80000;

    /// <summary>errno of a full disk and of an exceeded quota: the store reports both as "disk full".</summary>
    public const int ENoSpc = 28;
    public const int EDQuot = 122;

    /// <summary>
    /// Flushes a directory's entries (the renames that made replicas visible) to the disk: without it a rename may
    /// be lost in a crash although the file's bytes were flushed.
    /// </summary>
    public static void SyncDirectory(string path)
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }
        int fd = Open(path, ORdOnly | ODirectory | OCloexec);
        if (fd < 0)
        {
            throw new IOException($"cannot open directory {path} to flush it (errno {Marshal.GetLastPInvokeError()})");
        }
        try
        {
            if (FSync(fd) != 0)
            {
                int errno = Marshal.GetLastPInvokeError();
                throw new IOException($"flushing directory {path} failed (errno {errno})", errno);
            }
        }
        finally
        {
            _ = Close(fd);
        }
    }

    /// <summary>
    /// Reserves <paramref name="length"/> bytes of disk for a file being written, so a full disk shows when a
    /// replica is offered instead of halfway through it. Throws an IOException with HResult ENOSPC when there is no
    /// room; file systems that cannot reserve just get the file's length set.
    /// </summary>
    public static void Reserve(SafeFileHandle handle, string path, long length)
    {
        if (length <= 0)
        {
            return;
        }
        if (OperatingSystem.IsLinux())
        {
            int error = PosixFallocate(handle, 0, length);
            if (error is ENoSpc or EDQuot)
            {
                throw new IOException($"no space left on device for {length} bytes in {Path.GetDirectoryName(path)}", error);
            }
            if (error == 0)
            {
                return;
            }
        }
        RandomAccess.SetLength(handle, length);
    }

    [LibraryImport("libc", EntryPoint = "open", StringMarshalling = StringMarshalling.Utf8, SetLastError = true)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static partial int FSync(int fd);

    [LibraryImport("libc", EntryPoint = "close")]
    private static partial int Close(int fd);

    // posix_fallocate returns the error number instead of setting errno.
    [LibraryImport("libc", EntryPoint = "posix_fallocate")]
    private static partial int PosixFallocate(SafeFileHandle fd, long offset, long length);
}

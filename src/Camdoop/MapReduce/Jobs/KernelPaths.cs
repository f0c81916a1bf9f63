using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Paths as the Linux kernel resolves them (every link, '..' after a link, bind mounts), not as text: the file an
/// open handle refers to, and a directory's canonical path. .NET resolves link targets textually, which a link such
/// as <c>a.dll -&gt; s/../x.dll</c> (with <c>s</c> itself a link) fools.
/// </summary>
internal static partial class KernelPaths
{
    /// <summary>The path of the file <paramref name="handle"/> has open, from /proc; null where there is no /proc.</summary>
    public static string? Opened(SafeFileHandle handle)
    {
        ArgumentNullException.ThrowIfNull(handle);
        var entry = new FileInfo($"/proc/self/fd/{handle.DangerousGetHandle()}");
        try
        {
            return entry.LinkTarget;
        }
        catch (IOException)
        {
            return null;
        }
    }

    /// <summary>The canonical path of <paramref name="path"/> (realpath(3)); null when it does not resolve.</summary>
    public static string? Real(string path)
    {
        nint resolved = RealPath(path, 0);
        if (resolved == 0)
        {
            return null;
        }
        try
        {
            return Marshal.PtrToStringUTF8(resolved);
        }
        finally
        {
            // realpath(3) allocated it with malloc; FreeHGlobal is free(3) on Unix.
            Marshal.FreeHGlobal(resolved);
        }
    }

    [LibraryImport("libc", EntryPoint = "realpath", StringMarshalling = StringMarshalling.Utf8)]
    private static partial nint RealPath(string path, nint resolved);
}

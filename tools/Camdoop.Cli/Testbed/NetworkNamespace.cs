using System.Runtime.InteropServices;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// Runs code inside a named network namespace on a dedicated thread (setns(2) affects only the calling thread).
/// Sockets created there stay in that namespace after the thread ends, so they can be used from anywhere.
/// </summary>
public static partial class NetworkNamespace
{
    private const int CloneNewNet = 0x40000000;

    public static T Run<T>(string name, Func<T> action)
    {
        T? result = default;
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                using var handle = File.OpenHandle($"/run/netns/{name}");
                if (SetNs((int)handle.DangerousGetHandle(), CloneNewNet) != 0)
                {
                    throw new IOException($"cannot enter network namespace {name}: errno {Marshal.GetLastPInvokeError()}");
                }
                result = action();
            }
#pragma warning disable CA1031 // rethrown on the caller's thread
            catch (Exception ex)
#pragma warning restore CA1031
            {
                failure = ex;
            }
        })
        {
            IsBackground = true,
            Name = $"netns {name}",
        };
        thread.Start();
        thread.Join();
        if (failure is not null)
        {
            throw new IOException($"in network namespace {name}: {failure.Message}", failure);
        }
        return result!;
    }

    [LibraryImport("libc", EntryPoint = "setns", SetLastError = true)]
    private static partial int SetNs(int fd, int nstype);
}

using System.Runtime.InteropServices;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>
/// Runs code on a dedicated thread without CAP_NET_RAW in its effective set. Linux credentials are per thread, so
/// this shows a root process what an unprivileged one would get, without touching the rest of the test run.
/// </summary>
internal static unsafe partial class DroppedCapability
{
    private const uint CapabilityVersion3 = 0x20080522;
    private const int CapNetRaw = 13;

    public static T RunWithoutNetRaw<T>(Func<T> action)
    {
        T? result = default;
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                var header = new CapHeader { Version = CapabilityVersion3, Pid = 0 };
                var data = stackalloc CapData[2];
                if (CapGet(&header, data) != 0)
                {
                    throw new InvalidOperationException($"capget failed: errno {Marshal.GetLastPInvokeError()}");
                }
                data[0].Effective &= ~(1u << CapNetRaw);
                if (CapSet(&header, data) != 0)
                {
                    throw new InvalidOperationException($"capset failed: errno {Marshal.GetLastPInvokeError()}");
                }
                result = action();
            }
            // handed back to the test thread
            catch (Exception ex)
            {
                failure = ex;
            }
        });
        thread.Start();
        thread.Join();
        if (failure is not null)
        {
            throw failure;
        }
        return result!;
    }

    [LibraryImport("libc", EntryPoint = "capget", SetLastError = true)]
    private static partial int CapGet(CapHeader* header, CapData* data);

    [LibraryImport("libc", EntryPoint = "capset", SetLastError = true)]
    private static partial int CapSet(CapHeader* header, CapData* data);

    [StructLayout(LayoutKind.Sequential)]
    private struct CapHeader
    {
        public uint Version;
        public int Pid;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct CapData
    {
        public uint Effective;
        public uint Permitted;
        public uint Inheritable;
    }
}

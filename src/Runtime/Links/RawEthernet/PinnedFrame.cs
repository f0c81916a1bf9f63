using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>Native access to frame buffers, which live on the pinned object heap and so never move.</summary>
internal static unsafe class PinnedFrame
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static byte* Address(Frame frame) =>
        (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(frame.Buffer));
}

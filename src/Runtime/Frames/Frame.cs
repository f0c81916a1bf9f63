namespace Camdoop.Runtime.Frames;

/// <summary>
/// A pooled frame buffer. Whoever holds a frame owns it: handing it to a queue or a link transfers ownership,
/// and the last owner calls <see cref="Release"/>. Buffers live on the pinned object heap, so a link transport can
/// hand their address to the kernel (recvmmsg/sendmmsg) without pinning them per call.
/// </summary>
public sealed class Frame
{
    internal Frame(FramePool? pool)
    {
        Pool = pool;
        Buffer = GC.AllocateArray<byte>(FrameLayout.BufferSize, pinned: true);
    }

    public byte[] Buffer { get; }

    /// <summary>Bytes of the buffer in use, Ethernet header included.</summary>
    public int Length { get; set; }

    internal FramePool? Pool { get; set; }

    /// <summary>True while the frame sits in its pool's free list (guards against releasing it twice).</summary>
    internal bool IsFree { get; set; }

    public Span<byte> Span => Buffer.AsSpan(0, Length);

    /// <summary>Returns the buffer to its pool.</summary>
    public void Release()
    {
        Length = 0;
        Pool?.Return(this);
    }

    /// <summary>An unpooled frame, for tests.</summary>
    public static Frame Unpooled() => new(null);
}

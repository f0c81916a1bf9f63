namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// What one raw-Ethernet link did. Send-side fields are written by the event loop, receive-side fields by the link's
/// I/O thread; each field has a single writer, and any thread may read them for status.
/// </summary>
public sealed class RawLinkCounters
{
    internal long FramesSentField;
    internal long BytesSentField;
    internal long SendBatchesField;
    internal long SendErrorsField;
    internal long SendBlockedField;
    internal long OversizeDroppedField;
    internal long FramesReceivedField;
    internal long BytesReceivedField;
    internal long ReceiveBatchesField;
    internal long OwnFramesIgnoredField;
    internal long KernelDropsField;
    internal long InboxStallsField;

    /// <summary>Frames the kernel accepted for transmission.</summary>
    public long FramesSent => Volatile.Read(ref FramesSentField);

    public long BytesSent => Volatile.Read(ref BytesSentField);

    /// <summary>sendmmsg calls that sent at least one frame (frames per batch = FramesSent / SendBatches).</summary>
    public long SendBatches => Volatile.Read(ref SendBatchesField);

    /// <summary>Frames dropped because the kernel refused them (interface down or gone, MTU shrunk, queue full).</summary>
    public long SendErrors => Volatile.Read(ref SendErrorsField);

    /// <summary>Times the send buffer was full (EAGAIN) and the loop waited for the socket to become writable.</summary>
    public long SendBlocked => Volatile.Read(ref SendBlockedField);

    /// <summary>Frames handed to the link that exceeded its maximum frame size, dropped.</summary>
    public long OversizeDropped => Volatile.Read(ref OversizeDroppedField);

    public long FramesReceived => Volatile.Read(ref FramesReceivedField);

    public long BytesReceived => Volatile.Read(ref BytesReceivedField);

    public long ReceiveBatches => Volatile.Read(ref ReceiveBatchesField);

    /// <summary>Our own transmissions that reached the socket anyway and were discarded in user space.</summary>
    public long OwnFramesIgnored => Volatile.Read(ref OwnFramesIgnoredField);

    /// <summary>Frames the kernel dropped because the socket's receive buffer was full (PACKET_STATISTICS).</summary>
    public long KernelDrops => Volatile.Read(ref KernelDropsField);

    /// <summary>Times the I/O thread found the event loop's inbox full and had to wait.</summary>
    public long InboxStalls => Volatile.Read(ref InboxStallsField);

    /// <summary>One batch the kernel accepted (event loop, the send side's only writer).</summary>
    internal void AddSent(long frames, long bytes)
    {
        Volatile.Write(ref FramesSentField, FramesSentField + frames);
        Volatile.Write(ref BytesSentField, BytesSentField + bytes);
        Volatile.Write(ref SendBatchesField, SendBatchesField + 1);
    }

    /// <summary>One batch taken from the kernel (I/O thread, the receive side's only writer).</summary>
    internal void AddReceived(long frames, long bytes)
    {
        Volatile.Write(ref FramesReceivedField, FramesReceivedField + frames);
        Volatile.Write(ref BytesReceivedField, BytesReceivedField + bytes);
        Volatile.Write(ref ReceiveBatchesField, ReceiveBatchesField + 1);
    }

    public override string ToString() =>
        $"tx {FramesSent} frames {BytesSent} B ({SendBatches} batches, {SendErrors} errors, {SendBlocked} blocked, {OversizeDropped} oversize); " +
        $"rx {FramesReceived} frames {BytesReceived} B ({ReceiveBatches} batches, {KernelDrops} kernel drops, {OwnFramesIgnored} own, {InboxStalls} stalls)";
}

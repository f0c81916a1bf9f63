namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// The event loop's doorbell to a link's I/O thread: an eventfd the I/O thread polls beside the link's descriptor.
/// It rings to stop the thread and to ask it to watch for POLLOUT after the kernel's send buffer filled up
/// (<see cref="AwaitWritable"/>); the I/O thread answers that with a TransmitReady notice, after which the loop's
/// <see cref="OnWritable"/> lets it send again.
/// </summary>
internal sealed unsafe class LinkSignal : IDisposable
{
    private readonly int _eventFd;
    private bool _awaitingWritable; // event loop only
    private int _wantWritable;      // set by the event loop, taken by the I/O thread
    private int _disposed;

    private LinkSignal(int eventFd) => _eventFd = eventFd;

    /// <summary>The eventfd, for the I/O thread's poll(2).</summary>
    public int Fd => _eventFd;

    /// <summary>True while the loop waits for the kernel to take frames again: it must not try to send (event loop).</summary>
    public bool AwaitingWritable => _awaitingWritable;

    /// <summary>Whether the I/O thread should poll the link's descriptor for POLLOUT.</summary>
    public bool WantsWritable => Volatile.Read(ref _wantWritable) != 0;

    public static LinkSignal Create(string interfaceName)
    {
        int eventFd = LibC.EventFd(0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
        if (eventFd < 0)
        {
            throw new RawEthernetException($"cannot create an eventfd for {interfaceName}: {LibC.Describe(LibC.Errno)}");
        }
        return new LinkSignal(eventFd);
    }

    /// <summary>The kernel's send buffer is full (EAGAIN): stop sending and have the I/O thread watch for POLLOUT.</summary>
    public void AwaitWritable()
    {
        _awaitingWritable = true;
        Volatile.Write(ref _wantWritable, 1);
        Ring();
    }

    /// <summary>The I/O thread reported the kernel ready to take frames again (event loop).</summary>
    public void OnWritable() => _awaitingWritable = false;

    /// <summary>True, once per <see cref="AwaitWritable"/>, for the I/O thread that is to post TransmitReady.</summary>
    public bool TakeWritableRequest() => Interlocked.CompareExchange(ref _wantWritable, 0, 1) == 1;

    /// <summary>Wakes the I/O thread from its poll.</summary>
    public void Ring()
    {
        ulong one = 1;
        LibC.Write(_eventFd, &one, sizeof(ulong));
    }

    /// <summary>Resets the eventfd after it woke the I/O thread.</summary>
    public void Drain()
    {
        ulong drained;
        LibC.Read(_eventFd, &drained, sizeof(ulong));
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            LibC.Close(_eventFd);
        }
    }
}

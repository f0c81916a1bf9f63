using System.Diagnostics;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// The I/O thread of a raw-Ethernet link and its line to the node's event loop, the same for every driver: starting,
/// stopping and accounting for the thread, the carrier-check clock, the wait in poll(2) on the link's descriptor and
/// the <see cref="LinkSignal"/>, and posting events (waiting out a full inbox). A thread that fails reports its link
/// down instead of taking the server with it. The driver supplies the loop body: how frames are received and what a
/// carrier check looks at.
/// </summary>
internal sealed unsafe class LinkIoThread
{
    private readonly string _interfaceName;
    private readonly RawLinkCounters _counters;
    private readonly LinkSignal _signal;
    private readonly long _checkInterval;
    private ILinkEventSink? _sink;
    private Thread? _thread;
    private volatile bool _stopping;
    private int _threadId;
    private long _allocatedBytes;
    private long _nextCheck;
    private bool _carrier; // as the I/O thread last reported it

    public LinkIoThread(string interfaceName, RawLinkCounters counters, LinkSignal signal, TimeSpan checkInterval, bool carrier)
    {
        _interfaceName = interfaceName;
        _counters = counters;
        _signal = signal;
        _checkInterval = (long)(checkInterval.TotalSeconds * Stopwatch.Frequency);
        _carrier = carrier;
    }

    /// <summary>The port the link serves; set by <see cref="Start"/>.</summary>
    public Port Port { get; private set; }

    /// <summary>Set by <see cref="Stop"/>: the loop body should return.</summary>
    public bool Stopping => _stopping;

    public int ThreadId => Volatile.Read(ref _threadId);

    public long AllocatedBytes => Interlocked.Read(ref _allocatedBytes);

    /// <summary>Starts a background thread named "<paramref name="kind"/> port interface" that runs <paramref name="body"/>.</summary>
    public void Start(Port port, ILinkEventSink sink, string kind, Action body)
    {
        if (_thread is not null)
        {
            throw new InvalidOperationException($"link {_interfaceName} is already started");
        }
        Port = port;
        _sink = sink;
        _thread = new Thread(() => Run(sink, body))
        {
            IsBackground = true,
            Name = $"{kind} {port.Name()} {_interfaceName}",
        };
        _thread.Start();
    }

    /// <summary>Asks the thread to stop and joins it (unless called on it). Idempotent.</summary>
    public void Stop()
    {
        _stopping = true;
        var thread = _thread;
        if (thread is not null && thread != Thread.CurrentThread)
        {
            _signal.Ring();
            thread.Join();
        }
    }

    private void Run(ILinkEventSink sink, Action body)
    {
        Volatile.Write(ref _threadId, LibC.GetTid());
        _nextCheck = Stopwatch.GetTimestamp() + _checkInterval;
        try
        {
            body();
        }
        // a bug here must not take the server down: the link is reported dead instead
        catch (Exception ex)
        {
            sink.Log(LogLevel.Error, $"link {Port.Name()} {_interfaceName}: I/O thread failed, link abandoned: {ex}");
            if (_carrier)
            {
                Post(LinkEvent.Carrier(Port, false));
                sink.Wake();
            }
        }
        finally
        {
            SampleAllocatedBytes();
        }
    }

    /// <summary>
    /// True when the carrier check is due (the next one is then scheduled); <paramref name="pollTimeoutMs"/> is how
    /// long the thread may wait in poll(2) before the next one.
    /// </summary>
    public bool IsCheckDue(out int pollTimeoutMs)
    {
        long now = Stopwatch.GetTimestamp();
        bool due = now >= _nextCheck;
        if (due)
        {
            _nextCheck = now + _checkInterval;
        }
        pollTimeoutMs = (int)Math.Max(1, (_nextCheck - now) * 1000 / Stopwatch.Frequency);
        return due;
    }

    /// <summary>
    /// Waits in poll(2) for <paramref name="linkFd"/> (POLLIN, and POLLOUT while the loop waits to send; a negative
    /// descriptor is ignored) and for the signal, which it drains. Returns the link descriptor's events: none when the
    /// wait timed out, failed (logged) or was only signalled.
    /// </summary>
    public short Wait(int linkFd, int timeoutMs)
    {
        LibC.PollFd* fds = stackalloc LibC.PollFd[2];
        fds[0] = new LibC.PollFd { Fd = linkFd, Events = (short)(LibC.POLLIN | (_signal.WantsWritable ? LibC.POLLOUT : 0)) };
        fds[1] = new LibC.PollFd { Fd = _signal.Fd, Events = LibC.POLLIN };
        int ready = LibC.Poll(fds, 2, timeoutMs);
        if (ready <= 0)
        {
            if (ready < 0 && LibC.Errno != LibC.EINTR)
            {
                Log(LogLevel.Error, $"poll failed: {LibC.Describe(LibC.Errno)}");
                Thread.Sleep(10);
            }
            return 0;
        }
        if ((fds[1].REvents & LibC.POLLIN) != 0)
        {
            _signal.Drain();
        }
        return fds[0].REvents;
    }

    /// <summary>Posts TransmitReady if the event loop asked for it (the kernel takes frames again, or never will).</summary>
    public void ReportWritable()
    {
        if (_signal.TakeWritableRequest())
        {
            Post(LinkEvent.TransmitReady(Port));
            _sink!.Wake();
        }
    }

    /// <summary>Logs and posts a carrier change; nothing when <paramref name="up"/> is what was last reported.</summary>
    public void ReportCarrier(bool up)
    {
        if (up == _carrier)
        {
            return;
        }
        _carrier = up;
        Log(up ? LogLevel.Info : LogLevel.Warning, up ? "carrier up" : "carrier down");
        Post(LinkEvent.Carrier(Port, up));
        _sink!.Wake();
    }

    /// <summary>Posts to the loop, waiting while its inbox is full (the kernel's buffer absorbs the burst meanwhile).</summary>
    public bool Post(in LinkEvent linkEvent)
    {
        var sink = _sink!;
        if (sink.TryPost(linkEvent))
        {
            return true;
        }
        Volatile.Write(ref _counters.InboxStallsField, _counters.InboxStallsField + 1);
        sink.Wake();
        var spin = default(SpinWait);
        while (!sink.TryPost(linkEvent))
        {
            if (_stopping)
            {
                return false;
            }
            spin.SpinOnce(sleep1Threshold: 30);
        }
        return true;
    }

    /// <summary>Wakes the event loop to take what was posted.</summary>
    public void Wake() => _sink!.Wake();

    /// <summary>Logs "link port interface: <paramref name="what"/>"; nothing before <see cref="Start"/>.</summary>
    public void Log(LogLevel level, string what) => _sink?.Log(level, $"link {Port.Name()} {_interfaceName}: {what}");

    /// <summary>Publishes the bytes the thread has allocated so far (call it on the thread: every carrier check).</summary>
    public void SampleAllocatedBytes() => Interlocked.Exchange(ref _allocatedBytes, GC.GetAllocatedBytesForCurrentThread());
}

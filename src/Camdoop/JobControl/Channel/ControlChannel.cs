using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl.Channel;

/// <summary>
/// The reliable control channel the coordinator and the worker share. A message longer than a frame is cut into
/// fragments; each fragment is sent again until acknowledged, and given up after a number of tries. The wait before a
/// fragment is sent again adapts as TCP's does (RFC 6298): the smoothed round trip of acknowledged first sends plus
/// four deviations, doubled on every try (Karn), between a floor and the retry interval. A fixed wait sized for a
/// loaded cube would stall a job for that long on every lost control frame; the clock starts when a frame leaves the
/// channel's backlog, so a coordinator's burst to every server is not mistaken for loss. The receiver acknowledges
/// each fragment as it comes, reassembles the message and hands it over once; the fragment that completes a message
/// is acknowledged only after the receiver has taken it (so a receiver that is not ready yet is asked again).
/// Handlers must take a message twice without harm: an acknowledgement can be lost.
/// </summary>
public sealed class ControlChannel
{
    private readonly INodeContext _context;
    private readonly IControlNetwork _network;
    private readonly long _retryInterval;
    private readonly long _minRetry;
    private readonly int _maxAttempts;
    private RttEstimator _rtt;
    private readonly Func<Coordinate, ControlHeader, ReadOnlySpan<byte>, Delivery> _deliver;
    private readonly Action<Coordinate, ControlHeader, JobMessage, ReadOnlySpan<byte>> _acknowledged;
    private readonly Dictionary<MessageKey, Message> _messages = [];
    private readonly Dictionary<(int Source, JobMessage Kind, ulong Job, uint Extra), Partial> _partial = [];
    private readonly byte[] _frame = new byte[ControlWire.MaxPayload];
    private readonly Queue<Queued> _backlog = new();
    private bool _sweepArmed;
    private bool _stopped;

    /// <param name="context">The node the channel sends from.</param>
    /// <param name="network">How frames reach other servers.</param>
    /// <param name="retryInterval">The longest wait before an unacknowledged fragment is sent again (ns).</param>
    /// <param name="minRetry">The shortest wait, and the first one before any round trip is measured (ns).</param>
    /// <param name="maxAttempts">Sends of one fragment before it is given up.</param>
    /// <param name="deliver">Takes a whole message (header with fragment 0 of n) from a server.</param>
    /// <param name="acknowledged">Told when a reliable message's fragment was acknowledged, with the acknowledgement's body.</param>
    public ControlChannel(INodeContext context, IControlNetwork network, long retryInterval, long minRetry, int maxAttempts,
        Func<Coordinate, ControlHeader, ReadOnlySpan<byte>, Delivery> deliver,
        Action<Coordinate, ControlHeader, JobMessage, ReadOnlySpan<byte>> acknowledged)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(network);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(retryInterval);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(minRetry);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(minRetry, retryInterval);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxAttempts);
        _context = context;
        _network = network;
        _retryInterval = retryInterval;
        _minRetry = minRetry;
        _maxAttempts = maxAttempts;
        _deliver = deliver ?? throw new ArgumentNullException(nameof(deliver));
        _acknowledged = acknowledged ?? throw new ArgumentNullException(nameof(acknowledged));
    }

    /// <summary>Frames that did not parse, and messages their receiver found malformed.</summary>
    public long MalformedFrames { get; private set; }

    /// <summary>Reliable fragments never acknowledged within the allowed tries.</summary>
    public long GaveUpMessages { get; private set; }

    /// <summary>Frames sent, retries included.</summary>
    public long FramesSent { get; private set; }

    /// <summary>Bytes of the frames sent (payloads).</summary>
    public long BytesSent { get; private set; }

    /// <summary>Partly received messages dropped because their other fragments never came.</summary>
    public long AbandonedMessages { get; private set; }

    /// <summary>Messages with a fragment waiting for an acknowledgement.</summary>
    public int PendingCount => _messages.Count;

    /// <summary>Fragments sent again because no acknowledgement came in time.</summary>
    public long Retries { get; private set; }

    /// <summary>The wait before a fragment's first resend now (ns).</summary>
    public long RetryTimeout => _rtt.Timeout(_minRetry, _retryInterval);

    public Torus Torus => _context.Torus;

    /// <summary>
    /// Sends a message until <paramref name="destination"/> acknowledges every fragment. A message of the same
    /// (destination, kind, job, extra) still pending is replaced. <paramref name="onGiveUp"/> runs once if a fragment
    /// is never acknowledged; <paramref name="onDelivered"/> once every fragment is.
    /// </summary>
    public void SendReliable(Coordinate destination, JobMessage kind, ulong jobId, uint extra, ReadOnlySpan<byte> body,
        Action? onGiveUp = null, Action? onDelivered = null)
    {
        int fragments = Math.Max(1, (body.Length + ControlWire.MaxFragmentBody - 1) / ControlWire.MaxFragmentBody);
        if (fragments > ControlWire.MaxFragments)
        {
            throw new ArgumentException($"a {kind} message of {body.Length} bytes does not fit in {ControlWire.MaxFragments} fragments", nameof(body));
        }
        var key = new MessageKey(_context.Torus.IndexOf(destination), kind, jobId, extra);
        Cancel(key);
        var message = new Message(key, destination, fragments, onGiveUp, onDelivered);
        _messages[key] = message;
        for (int f = 0; f < fragments; f++)
        {
            var part = body.Slice(f * ControlWire.MaxFragmentBody, Math.Min(ControlWire.MaxFragmentBody, body.Length - (f * ControlWire.MaxFragmentBody)));
            var payload = new byte[ControlWire.HeaderSize + part.Length];
            ControlWire.WriteHeader(payload, new ControlHeader(kind, jobId, extra, f, fragments));
            part.CopyTo(payload.AsSpan(ControlWire.HeaderSize));
            var pending = new Pending(payload);
            message.Fragments[f] = pending;
            Transmit(message, f, pending);
        }
    }

    /// <summary>Sends a one-fragment message once (progress reports: the next one covers a loss).</summary>
    public void SendOnce(Coordinate destination, JobMessage kind, ulong jobId, uint extra, ReadOnlySpan<byte> body)
    {
        if (body.Length > ControlWire.MaxFragmentBody)
        {
            throw new ArgumentException($"a {kind} message sent once must fit one frame", nameof(body));
        }
        ControlWire.WriteHeader(_frame, new ControlHeader(kind, jobId, extra, 0, 1));
        body.CopyTo(_frame.AsSpan(ControlWire.HeaderSize));
        Send(destination, _frame.AsSpan(0, ControlWire.HeaderSize + body.Length), null);
    }

    /// <summary>Stops sending a pending message (every fragment of it).</summary>
    public void Cancel(Coordinate destination, JobMessage kind, ulong jobId, uint extra) =>
        Cancel(new MessageKey(_context.Torus.IndexOf(destination), kind, jobId, extra));

    /// <summary>Stops sending every pending message of <paramref name="jobId"/> to <paramref name="destination"/> whose kind is one of <paramref name="kinds"/>.</summary>
    public void CancelAll(Coordinate destination, ulong jobId, params JobMessage[] kinds)
    {
        int dest = _context.Torus.IndexOf(destination);
        foreach (var key in _messages.Keys.Where(k => k.Destination == dest && k.Job == jobId && kinds.Contains(k.Kind)).ToList())
        {
            Cancel(key);
        }
    }

    /// <summary>Stops sending every pending message of <paramref name="jobId"/> of the given kinds, whatever its destination.</summary>
    public void CancelJob(ulong jobId, params JobMessage[] kinds)
    {
        foreach (var key in _messages.Keys.Where(k => k.Job == jobId && kinds.Contains(k.Kind)).ToList())
        {
            Cancel(key);
        }
    }

    private void Cancel(MessageKey key)
    {
        if (!_messages.Remove(key, out var message))
        {
            return;
        }
        foreach (var pending in message.Fragments)
        {
            if (pending is not null)
            {
                _context.CancelTimer(pending.Timer);
            }
        }
    }

    public void Stop()
    {
        _stopped = true;
        foreach (var key in _messages.Keys.ToList())
        {
            Cancel(key);
        }
        _partial.Clear();
        _backlog.Clear();
    }

    public void OnFrame(Coordinate from, ReadOnlySpan<byte> payload)
    {
        if (!ControlWire.TryReadHeader(payload, out var header) || !_context.Torus.Contains(from))
        {
            MalformedFrames++;
            return;
        }
        var body = payload[ControlWire.HeaderSize..];
        if (header.Kind == JobMessage.Ack)
        {
            OnAck(from, header, body);
            return;
        }
        if (header.Fragments == 1)
        {
            Complete(from, header, body);
            return;
        }
        int source = _context.Torus.IndexOf(from);
        var id = (source, header.Kind, header.JobId, header.Extra);
        if (!_partial.TryGetValue(id, out var partial) || partial.Parts.Length != header.Fragments)
        {
            partial = new Partial(header.Fragments, _context.Now);
            _partial[id] = partial;
            ArmSweep();
        }
        if (partial.Parts[header.Fragment] is null)
        {
            partial.Parts[header.Fragment] = body.ToArray();
            partial.Received++;
        }
        if (partial.Received < header.Fragments)
        {
            SendAck(from, header, null);
            return;
        }
        var whole = new byte[partial.Parts.Sum(p => p!.Length)];
        int offset = 0;
        foreach (var part in partial.Parts)
        {
            part!.CopyTo(whole, offset);
            offset += part!.Length;
        }
        if (Complete(from, header with { Fragment = 0 }, whole, ackFragment: header.Fragment))
        {
            _partial.Remove(id);
        }
    }

    /// <summary>Hands a whole message over and acknowledges it as the receiver says; true when it was taken.</summary>
    private bool Complete(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body, int ackFragment = 0)
    {
        var delivery = _deliver(from, header, body);
        switch (delivery.Kind)
        {
            case DeliveryKind.Acknowledge:
                SendAck(from, header with { Fragment = ackFragment }, delivery.AckBody);
                return true;
            case DeliveryKind.Malformed:
                MalformedFrames++;
                return true;
            default:
                return false;
        }
    }

    private void SendAck(Coordinate to, ControlHeader acked, byte[]? body)
    {
        ControlWire.WriteHeader(_frame, new ControlHeader(JobMessage.Ack, acked.JobId, acked.Extra, acked.Fragment, acked.Fragments));
        _frame[ControlWire.HeaderSize] = (byte)acked.Kind;
        int length = ControlWire.HeaderSize + 1;
        if (body is not null)
        {
            body.CopyTo(_frame, length);
            length += body.Length;
        }
        Send(to, _frame.AsSpan(0, length), null);
    }

    private void OnAck(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        if (body.Length < 1 || body[0] is 0 or > (byte)JobMessage.QueryReply or (byte)JobMessage.Ack)
        {
            MalformedFrames++;
            return;
        }
        var kind = (JobMessage)body[0];
        var key = new MessageKey(_context.Torus.IndexOf(from), kind, header.JobId, header.Extra);
        if (!_messages.TryGetValue(key, out var message) || header.Fragment >= message.Fragments.Length
            || header.Fragments != message.Fragments.Length || message.Fragments[header.Fragment] is not { } pending)
        {
            return; // a late or repeated acknowledgement
        }
        _context.CancelTimer(pending.Timer);
        message.Fragments[header.Fragment] = null;
        if (pending.Attempts == 1 && pending.SentAt >= 0)
        {
            _rtt.Add(_context.Now - pending.SentAt);
        }
        _acknowledged(from, header, kind, body[1..]);
        if (--message.Unacknowledged == 0)
        {
            _messages.Remove(key);
            message.OnDelivered?.Invoke();
        }
    }

    private void Transmit(Message message, int fragment, Pending pending)
    {
        pending.Attempts++;
        pending.SentAt = -1;
        Send(message.Destination, pending.Payload, new Retry(message, fragment, pending));
    }

    /// <summary>A fragment has left: its resend is due after the current wait, doubled for each try before.</summary>
    private void ArmRetry(Retry retry)
    {
        var (message, fragment, pending) = retry;
        if (_stopped || !ReferenceEquals(message.Fragments[fragment], pending))
        {
            return; // acknowledged or cancelled while it waited in the backlog
        }
        pending.SentAt = _context.Now;
        long wait = Math.Min(_retryInterval, RetryTimeout << Math.Min(pending.Attempts - 1, 20));
        pending.Timer = _context.SetTimer(wait, () =>
        {
            if (_stopped || !_messages.TryGetValue(message.Key, out var current) || !ReferenceEquals(current, message)
                || !ReferenceEquals(message.Fragments[fragment], pending))
            {
                return;
            }
            if (pending.Attempts >= _maxAttempts)
            {
                Cancel(message.Key);
                GaveUpMessages++;
                _context.Log(LogLevel.Warning, $"job control: {message.Key.Kind} for job {message.Key.Job:x16} never acknowledged by {message.Destination.Name}");
                message.OnGiveUp?.Invoke();
                return;
            }
            Retries++;
            Transmit(message, fragment, pending);
        });
    }

    private void Send(Coordinate destination, ReadOnlySpan<byte> payload, Retry? retry)
    {
        FramesSent++;
        BytesSent += payload.Length;
        // Frames wait their turn behind those the node's queue refused: a coordinator sends to every server at once.
        if (_backlog.Count > 0 || !_network.TrySend(destination, payload))
        {
            _backlog.Enqueue(new Queued(destination, payload.ToArray(), retry));
            return;
        }
        if (retry is not null)
        {
            ArmRetry(retry);
        }
    }

    /// <summary>The node's queue has room again: frames waiting go out in order until it is full.</summary>
    public void OnSendReady()
    {
        while (_backlog.Count > 0 && !_stopped)
        {
            var queued = _backlog.Peek();
            if (!_network.TrySend(queued.Destination, queued.Payload))
            {
                return;
            }
            _backlog.Dequeue();
            if (queued.Retry is not null)
            {
                ArmRetry(queued.Retry);
            }
        }
    }

    /// <summary>Frames waiting for room in the node's queue.</summary>
    public int Backlog => _backlog.Count;

    /// <summary>Drops partial messages whose missing fragments did not come within every try a sender makes.</summary>
    private void ArmSweep()
    {
        if (_sweepArmed)
        {
            return;
        }
        _sweepArmed = true;
        long lifetime = _retryInterval * (_maxAttempts + 1);
        _context.SetTimer(lifetime, () =>
        {
            _sweepArmed = false;
            if (_stopped)
            {
                return;
            }
            long now = _context.Now;
            foreach (var (id, partial) in _partial.Where(p => now - p.Value.StartedAt >= lifetime).ToList())
            {
                _partial.Remove(id);
                AbandonedMessages++;
            }
            if (_partial.Count > 0)
            {
                ArmSweep();
            }
        });
    }

    private readonly record struct MessageKey(int Destination, JobMessage Kind, ulong Job, uint Extra);

    /// <summary>What to arm once a reliable fragment has left.</summary>
    private sealed record Retry(Message Message, int Fragment, Pending Pending);

    private readonly record struct Queued(Coordinate Destination, byte[] Payload, Retry? Retry);

    private sealed class Message(MessageKey key, Coordinate destination, int fragments, Action? onGiveUp, Action? onDelivered)
    {
        public MessageKey Key { get; } = key;

        public Coordinate Destination { get; } = destination;

        /// <summary>Each fragment until it is acknowledged, then null.</summary>
        public Pending?[] Fragments { get; } = new Pending?[fragments];

        public int Unacknowledged { get; set; } = fragments;

        public Action? OnGiveUp { get; } = onGiveUp;

        public Action? OnDelivered { get; } = onDelivered;
    }

    private sealed class Pending(byte[] payload)
    {
        public byte[] Payload { get; } = payload;

        public int Attempts { get; set; }

        /// <summary>When the last send left the channel (ns), or -1 while it waits in the backlog.</summary>
        public long SentAt { get; set; } = -1;

        public TimerHandle Timer { get; set; }
    }

    private sealed class Partial(int fragments, long startedAt)
    {
        public byte[]?[] Parts { get; } = new byte[fragments][];

        public int Received { get; set; }

        public long StartedAt { get; } = startedAt;
    }
}

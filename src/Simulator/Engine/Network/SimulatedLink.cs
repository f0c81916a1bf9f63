using System.Numerics;
using System.Runtime.CompilerServices;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

/// <summary>
/// One direction of a full-duplex cable: the sending port's NIC transmit ring (FIFO, a few frames, the head being
/// serialised) and the frames on the wire. Frames on a link all take the same propagation and forwarding delay,
/// so they arrive in the order they left and the wire is a FIFO too; events name the link, not the frame.
/// <para>
/// The ring belongs to the sender's partition and the wire to the receiver's, so that the two may run on different
/// threads: a frame that finishes serialising moves to the wire at once when both ends are in one partition, or
/// through the sender partition's outbox and the receiver's inbox otherwise (it is not due before the receiver takes it).
/// </para>
/// </summary>
public sealed class SimulatedLink : ILinkTransport
{
    private readonly int _ringDepth;
    private readonly Xoshiro256StarStar _loss;
    private Slot[] _ring;
    private int _ringMask;
    private int _ringHead;
    private int _ringTail;
    private Frame?[] _wire;
    private int _wireMask;
    private int _wireHead;
    private int _wireTail;
    private long _sendDrops;
    private long _receiveDrops;

    internal SimulatedLink(Simulation sim, int index, Coordinate from, Port port, Coordinate to, int ringDepth, double lossRate, Xoshiro256StarStar loss)
        : this(index, index / Ports.Count, from, port, sim.Torus.IndexOf(to), to, port.Opposite(), ringDepth, lossRate, loss)
    {
    }

    /// <summary>
    /// A link direction between any two nodes of a switched network (servers, then switches, by node index); a
    /// switch's end names its port number as <see cref="Port"/>. The ring grows up to <paramref name="ringDepth"/>
    /// frames: a switch port's queue is bounded in bytes by its switch instead.
    /// </summary>
    internal SimulatedLink(int index, int fromNode, Coordinate from, Port port, int toNode, Coordinate to, Port toPort, int ringDepth, double lossRate, Xoshiro256StarStar loss)
    {
        _ringDepth = ringDepth;
        _ring = new Slot[Math.Max(4, (int)BitOperations.RoundUpToPowerOf2((uint)Math.Min(ringDepth, 16)))];
        _ringMask = _ring.Length - 1;
        _wire = new Frame?[16];
        _wireMask = _wire.Length - 1;
        _loss = loss;
        Index = index;
        From = from;
        Port = port;
        To = to;
        ToPort = toPort;
        FromIndex = fromNode;
        ToIndex = toNode;
        LossRate = lossRate;
    }

    /// <summary>Position in <see cref="Simulation.Links"/>: server index x 6 + port (a switch's ports come after every server's).</summary>
    public int Index { get; }

    public Coordinate From { get; }

    public Port Port { get; }

    public Coordinate To { get; }

    /// <summary>The port the frames come in on at <see cref="To"/>.</summary>
    public Port ToPort { get; }

    /// <summary>Node index of the sender: a server's torus index, or a switch's (after every server's).</summary>
    public int FromIndex { get; }

    /// <summary>Node index of the receiver.</summary>
    public int ToIndex { get; }

    /// <summary>The cable's own rate when it differs from the simulation's (an agg box's cable); 0 otherwise.</summary>
    internal long OwnRateBitsPerSecond { get; init; }

    /// <summary>Bits per second this link serialises at.</summary>
    public long RateBitsPerSecond => OwnRateBitsPerSecond != 0 ? OwnRateBitsPerSecond : Sender.Simulation.Options.LinkRateBitsPerSecond;

    /// <summary>Names the switch ends for <see cref="ToString"/> (null on a torus link).</summary>
    internal string? Label { get; set; }

    /// <summary>The other direction of the same cable.</summary>
    public SimulatedLink Peer { get; internal set; } = null!;

    /// <summary>The partitions of the sender and of the receiver.</summary>
    internal SimulationPartition Sender { get; set; } = null!;

    internal SimulationPartition Receiver { get; set; } = null!;

    public long Frames { get; private set; }

    public long Bytes { get; private set; }

    /// <summary>Nanoseconds spent serialising, framing overhead included.</summary>
    public long BusyTime { get; private set; }

    /// <summary>Frames lost: at random, by a failure, or arriving at a crashed server.</summary>
    public long Drops => _sendDrops + _receiveDrops;

    /// <summary>Probability that a frame is lost on this link (drawn from the link's own stream of the run's seed).</summary>
    public double LossRate { get; set; }

    public LinkStats Stats => new(Frames, Bytes, BusyTime, Drops);

    /// <summary>Frames in the transmit ring, the one being serialised included.</summary>
    public int Queued => _ringTail - _ringHead;

    /// <summary>Bytes of the frames in the transmit ring (a switch port's queue length).</summary>
    public int QueuedBytes { get; private set; }

    /// <summary>Frames serialised and not yet handed to the receiver.</summary>
    public int InFlight => _wireTail - _wireHead;

    public bool CarrierUp { get; internal set; } = true;

    public bool CanSend => _ringTail - _ringHead < _ringDepth && CarrierUp;

    /// <summary>Bumped when the link or its sender fails: events scheduled before that are void.</summary>
    internal int Epoch { get; private set; }

    /// <summary>The transmitter's sleep and wake under EEE (null under any other energy model, or none).</summary>
    public EeeTransmitter? Eee { get; internal set; }

    /// <summary>Bumped when the head frame's start is moved earlier (coalescing): its older completion event is void.</summary>
    internal long TransmitTicket { get; private set; }

    public bool TrySend(Frame frame)
    {
        int queued = _ringTail - _ringHead;
        if (queued >= _ringDepth || !CarrierUp)
        {
            return false;
        }
        if (queued == _ring.Length)
        {
            GrowRing();
        }
        int length = frame.Length;
        // A frame the host hands over while its core is busy (work just charged) leaves when the work ends.
        long notBefore = Sender.ComputeFreeAt(FromIndex);
        QueuedBytes += length;
        _ring[_ringTail++ & _ringMask] = new Slot(frame, length, notBefore);
        if (queued == 0)
        {
            Sender.ScheduleTransmitComplete(this, length, Eee is null ? notBefore : Eee.StartAfterIdle(Math.Max(Sender.Now, notBefore), 1, _ringDepth));
        }
        else if (Eee is not null)
        {
            WakeIfTriggered(queued + 1);
        }
        return true;
    }

    public override string ToString() => Label ?? $"{From} {Port.Name()} -> {To}";

    /// <summary>Nanoseconds to serialise a frame here: the simulation's rate unless the cable has its own (one branch on the hot path).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal long SerialisationTime(Simulation simulation, int frameLength) => OwnRateBitsPerSecond == 0
        ? simulation.SerialisationTime(frameLength)
        : simulation.SerialisationTimeAt(frameLength, OwnRateBitsPerSecond);

    /// <summary>Length of the frame the next event concerns (for the trace): the oldest on the wire, or the one being serialised.</summary>
    internal int HeadLength(bool wire) => wire
        ? (_wireTail != _wireHead ? _wire[_wireHead & _wireMask]!.Length : 0)
        : (_ringTail != _ringHead ? _ring[_ringHead & _ringMask].Length : 0);

    /// <summary>The head of the ring is on the wire: count it, lose it or send it on its way, start the next one.</summary>
    internal void CompleteTransmit()
    {
        ref var head = ref _ring[_ringHead & _ringMask];
        var frame = head.Frame!;
        int length = head.Length;
        head = default;
        _ringHead++;
        QueuedBytes -= length;
        var sender = Sender;
        Frames++;
        Bytes += length;
        BusyTime += SerialisationTime(sender.Simulation, length);
        Eee?.Ended(sender.Now);
        if (ShouldDrop(frame))
        {
            _sendDrops++;
            frame.Release();
        }
        else
        {
            sender.ScheduleArrival(this, frame);
        }
        if (_ringTail != _ringHead)
        {
            ref readonly var next = ref _ring[_ringHead & _ringMask];
            long notBefore = Eee is null ? next.NotBefore : Eee.StartAfterIdle(Math.Max(sender.Now, next.NotBefore), _ringTail - _ringHead, _ringDepth);
            sender.ScheduleTransmitComplete(this, next.Length, notBefore);
        }
    }

    /// <summary>A coalescing link held asleep wakes once enough frames wait: its head then starts earlier than scheduled.</summary>
    private void WakeIfTriggered(int waiting)
    {
        long start = Eee!.OnQueued(Sender.Now, waiting, _ringDepth);
        if (start >= 0)
        {
            TransmitTicket++;
            ref readonly var head = ref _ring[_ringHead & _ringMask];
            Sender.ScheduleTransmitComplete(this, head.Length, start);
        }
    }

    /// <summary>A frame that left the sender joins the wire (on the receiver's side).</summary>
    internal void PutOnWire(Frame frame)
    {
        if (_wireTail - _wireHead == _wire.Length)
        {
            GrowWire();
        }
        _wire[_wireTail++ & _wireMask] = frame;
    }

    /// <summary>The oldest frame on the wire reaches the receiver; null (and counted) when the receiver is down.</summary>
    internal Frame? Arrive(bool receiverFailed)
    {
        ref var slot = ref _wire[_wireHead++ & _wireMask];
        var frame = slot!;
        slot = null;
        if (receiverFailed)
        {
            _receiveDrops++;
            frame.Release();
            return null;
        }
        return frame;
    }

    /// <summary>Loses everything in the ring and on the wire (link cut or sender crashed) and voids pending events.</summary>
    internal void DropAll()
    {
        _sendDrops += (_ringTail - _ringHead) + (_wireTail - _wireHead);
        ReleaseAll();
        Epoch++;
        Eee?.Abandon(Sender.Now);
    }

    /// <summary>Returns every held frame to the pool without counting it (the simulation is being torn down).</summary>
    internal void ReleaseAll()
    {
        for (int i = _ringHead; i != _ringTail; i++)
        {
            _ring[i & _ringMask].Frame!.Release();
            _ring[i & _ringMask] = default;
        }
        for (int i = _wireHead; i != _wireTail; i++)
        {
            _wire[i & _wireMask]!.Release();
            _wire[i & _wireMask] = null;
        }
        _ringHead = _ringTail = 0;
        _wireHead = _wireTail = 0;
        QueuedBytes = 0;
    }

    private bool ShouldDrop(Frame frame)
    {
        double rate = LossRate;
        if (rate > 0 && _loss.NextDouble() < rate)
        {
            return true;
        }
        var filter = Sender.Simulation.DropFilter;
        return filter is not null && filter(this, frame);
    }

    private void GrowRing()
    {
        var bigger = new Slot[_ring.Length * 2];
        for (int i = _ringHead; i != _ringTail; i++)
        {
            bigger[i - _ringHead] = _ring[i & _ringMask];
        }
        _ringTail -= _ringHead;
        _ringHead = 0;
        _ring = bigger;
        _ringMask = bigger.Length - 1;
    }

    private void GrowWire()
    {
        var bigger = new Frame?[_wire.Length * 2];
        for (int i = _wireHead; i != _wireTail; i++)
        {
            bigger[i - _wireHead] = _wire[i & _wireMask];
        }
        _wireTail -= _wireHead;
        _wireHead = 0;
        _wire = bigger;
        _wireMask = bigger.Length - 1;
    }

    private readonly record struct Slot(Frame? Frame, int Length, long NotBefore);
}

using System.Numerics;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Network;

/// <summary>
/// One direction of a full-duplex cable: the sending port's NIC transmit ring (FIFO, a few frames, the head being
/// serialised) and the frames on the wire. Frames on a link all take the same propagation and forwarding delay,
/// so they arrive in the order they left and the wire is a FIFO too; events name the link, not the frame.
/// <para>
/// Both live in one circular buffer, oldest first: [wire head, ring head) is on the wire, [ring head, tail) is in
/// the transmit ring. One array per link, each slot holding the frame and its length, keeps the per-event working
/// set small: a transmit completion does not touch the frame itself.
/// </para>
/// </summary>
public sealed class SimulatedLink : ILinkTransport
{
    private readonly Simulation _sim;
    private readonly int _ringDepth;
    private Slot[] _frames;
    private int _mask;
    private int _wireHead;
    private int _ringHead;
    private int _tail;

    internal SimulatedLink(Simulation sim, int index, Coordinate from, Port port, Coordinate to, int ringDepth, double lossRate)
    {
        _sim = sim;
        _ringDepth = ringDepth;
        _frames = new Slot[Math.Max(16, (int)BitOperations.RoundUpToPowerOf2((uint)ringDepth * 2))];
        _mask = _frames.Length - 1;
        Index = index;
        From = from;
        Port = port;
        To = to;
        FromIndex = index / Ports.Count;
        ToIndex = sim.Torus.IndexOf(to);
        LossRate = lossRate;
    }

    /// <summary>Position in <see cref="Simulation.Links"/>: server index x 6 + port.</summary>
    public int Index { get; }

    public Coordinate From { get; }

    public Port Port { get; }

    public Coordinate To { get; }

    /// <summary>The port the frames come in on at <see cref="To"/>.</summary>
    public Port ToPort => Port.Opposite();

    public int FromIndex { get; }

    public int ToIndex { get; }

    /// <summary>The other direction of the same cable.</summary>
    public SimulatedLink Peer { get; internal set; } = null!;

    public long Frames { get; private set; }

    public long Bytes { get; private set; }

    /// <summary>Nanoseconds spent serialising, framing overhead included.</summary>
    public long BusyTime { get; private set; }

    public long Drops { get; private set; }

    /// <summary>Probability that a frame is lost on this link (drawn from the simulation's seeded generator).</summary>
    public double LossRate { get; set; }

    public LinkStats Stats => new(Frames, Bytes, BusyTime, Drops);

    /// <summary>Frames in the transmit ring, the one being serialised included.</summary>
    public int Queued => _tail - _ringHead;

    /// <summary>Frames serialised and not yet handed to the receiver.</summary>
    public int InFlight => _ringHead - _wireHead;

    public bool CarrierUp { get; internal set; } = true;

    public bool CanSend => _tail - _ringHead < _ringDepth && CarrierUp;

    /// <summary>Bumped when the link or its sender fails: events scheduled before that are void.</summary>
    internal int Epoch { get; private set; }

    public bool TrySend(Frame frame)
    {
        int queued = _tail - _ringHead;
        if (queued >= _ringDepth || !CarrierUp)
        {
            return false;
        }
        if (_tail - _wireHead == _frames.Length)
        {
            Grow();
        }
        int length = frame.Length;
        _frames[_tail++ & _mask] = new Slot(frame, length);
        if (queued == 0)
        {
            _sim.ScheduleTransmitComplete(this, length);
        }
        return true;
    }

    public override string ToString() => $"{From} {Port.Name()} -> {To}";

    /// <summary>Length of the frame the next event concerns (for the trace): the oldest on the wire, or the one being serialised.</summary>
    internal int HeadLength(bool wire) => wire
        ? (_ringHead != _wireHead ? _frames[_wireHead & _mask].Length : 0)
        : (_tail != _ringHead ? _frames[_ringHead & _mask].Length : 0);

    /// <summary>The head of the ring is on the wire: count it, lose it or send it on its way, start the next one.</summary>
    internal void CompleteTransmit()
    {
        ref var head = ref _frames[_ringHead & _mask];
        int length = head.Length;
        Frames++;
        Bytes += length;
        BusyTime += _sim.SerialisationTime(length);
        if (_sim.ShouldDrop(this, head.Frame!))
        {
            // Take it out of the buffer: the frames behind it in the ring (fewer than the ring depth) move up.
            Drops++;
            head.Frame!.Release();
            for (int i = _ringHead; i != _tail - 1; i++)
            {
                _frames[i & _mask] = _frames[(i + 1) & _mask];
            }
            _frames[--_tail & _mask] = default;
        }
        else
        {
            _ringHead++;
            _sim.ScheduleArrival(this);
        }
        if (_tail != _ringHead)
        {
            _sim.ScheduleTransmitComplete(this, _frames[_ringHead & _mask].Length);
        }
    }

    /// <summary>The oldest frame on the wire reaches the receiver; null (and counted) when the receiver is down.</summary>
    internal Frame? Arrive(bool receiverFailed)
    {
        ref var slot = ref _frames[_wireHead++ & _mask];
        var frame = slot.Frame!;
        slot = default;
        if (receiverFailed)
        {
            Drops++;
            frame.Release();
            return null;
        }
        return frame;
    }

    /// <summary>Loses everything in the ring and on the wire (link cut or sender crashed) and voids pending events.</summary>
    internal void DropAll()
    {
        Drops += _tail - _wireHead;
        ReleaseAll();
        Epoch++;
    }

    /// <summary>Returns every held frame to the pool without counting it (the simulation is being torn down).</summary>
    internal void ReleaseAll()
    {
        for (int i = _wireHead; i != _tail; i++)
        {
            _frames[i & _mask].Frame!.Release();
            _frames[i & _mask] = default;
        }
        _wireHead = _ringHead = _tail = 0;
    }

    private void Grow()
    {
        var bigger = new Slot[_frames.Length * 2];
        for (int i = _wireHead; i != _tail; i++)
        {
            bigger[i - _wireHead] = _frames[i & _mask];
        }
        _ringHead -= _wireHead;
        _tail -= _wireHead;
        _wireHead = 0;
        _frames = bigger;
        _mask = bigger.Length - 1;
    }

    private readonly record struct Slot(Frame? Frame, int Length);
}

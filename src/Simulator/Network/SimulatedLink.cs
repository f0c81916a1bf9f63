using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Network;

/// <summary>
/// One direction of a full-duplex cable: the sending port's NIC transmit ring (FIFO, a few frames, the head being
/// serialised) and the frames on the wire. Frames on a link all take the same propagation and forwarding delay,
/// so they arrive in the order they left and the wire is a FIFO too; events name the link, not the frame.
/// </summary>
public sealed class SimulatedLink : ILinkTransport
{
    private readonly Simulation _sim;
    private readonly Frame?[] _ring;
    private int _ringHead;
    private int _ringCount;
    private Frame?[] _wire = new Frame?[16];
    private int _wireHead;
    private int _wireCount;

    internal SimulatedLink(Simulation sim, int index, Coordinate from, Port port, Coordinate to, int ringDepth, double lossRate)
    {
        _sim = sim;
        _ring = new Frame?[ringDepth];
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
    public int Queued => _ringCount;

    /// <summary>Frames serialised and not yet handed to the receiver.</summary>
    public int InFlight => _wireCount;

    public bool CarrierUp { get; internal set; } = true;

    public bool CanSend => _ringCount < _ring.Length && CarrierUp;

    /// <summary>Bumped when the link or its sender fails: events scheduled before that are void.</summary>
    internal int Epoch { get; private set; }

    public bool TrySend(Frame frame)
    {
        if (_ringCount == _ring.Length || !CarrierUp)
        {
            return false;
        }
        int tail = _ringHead + _ringCount;
        if (tail >= _ring.Length)
        {
            tail -= _ring.Length;
        }
        _ring[tail] = frame;
        if (_ringCount++ == 0)
        {
            _sim.ScheduleTransmitComplete(this, frame.Length);
        }
        return true;
    }

    public override string ToString() => $"{From} {Port.Name()} -> {To}";

    /// <summary>Length of the frame the next event of <paramref name="kind"/> concerns (for the trace).</summary>
    internal int HeadLength(bool wire) => wire
        ? (_wireCount > 0 ? _wire[_wireHead]!.Length : 0)
        : (_ringCount > 0 ? _ring[_ringHead]!.Length : 0);

    /// <summary>The head of the ring is on the wire: count it, lose it or send it on its way, start the next one.</summary>
    internal void CompleteTransmit()
    {
        var frame = _ring[_ringHead]!;
        _ring[_ringHead] = null;
        _ringHead = _ringHead + 1 == _ring.Length ? 0 : _ringHead + 1;
        _ringCount--;
        int length = frame.Length;
        Frames++;
        Bytes += length;
        BusyTime += _sim.SerialisationTime(length);
        if (_sim.ShouldDrop(this, frame))
        {
            Drops++;
            frame.Release();
        }
        else
        {
            PushWire(frame);
            _sim.ScheduleArrival(this);
        }
        if (_ringCount > 0)
        {
            _sim.ScheduleTransmitComplete(this, _ring[_ringHead]!.Length);
        }
    }

    /// <summary>The oldest frame on the wire reaches the receiver; null (and counted) when the receiver is down.</summary>
    internal Frame? Arrive(bool receiverFailed)
    {
        var frame = _wire[_wireHead]!;
        _wire[_wireHead] = null;
        _wireHead = _wireHead + 1 == _wire.Length ? 0 : _wireHead + 1;
        _wireCount--;
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
        Drops += _ringCount + _wireCount;
        ReleaseAll();
        Epoch++;
    }

    /// <summary>Returns every held frame to the pool without counting it (the simulation is being torn down).</summary>
    internal void ReleaseAll()
    {
        while (_ringCount > 0)
        {
            _ring[_ringHead]!.Release();
            _ring[_ringHead] = null;
            _ringHead = _ringHead + 1 == _ring.Length ? 0 : _ringHead + 1;
            _ringCount--;
        }
        while (_wireCount > 0)
        {
            _wire[_wireHead]!.Release();
            _wire[_wireHead] = null;
            _wireHead = _wireHead + 1 == _wire.Length ? 0 : _wireHead + 1;
            _wireCount--;
        }
        _ringHead = 0;
        _wireHead = 0;
    }

    private void PushWire(Frame frame)
    {
        if (_wireCount == _wire.Length)
        {
            var bigger = new Frame?[_wire.Length * 2];
            for (int i = 0; i < _wireCount; i++)
            {
                int at = _wireHead + i;
                bigger[i] = _wire[at >= _wire.Length ? at - _wire.Length : at];
            }
            _wire = bigger;
            _wireHead = 0;
        }
        int tail = _wireHead + _wireCount;
        if (tail >= _wire.Length)
        {
            tail -= _wire.Length;
        }
        _wire[tail] = frame;
        _wireCount++;
    }
}

using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Tests.Network.Services;

/// <summary>
/// Busy, irregular traffic for determinism tests: at random intervals sends bursts of random-sized frames on random
/// ports, and forwards some received frames onwards (zero copy) or echoes them locally. In lockstep, intervals are
/// multiples of 50 us and frames have one of three sizes, so many events fall due at the same instant.
/// </summary>
internal sealed class RandomTrafficService(Xoshiro256StarStar random, bool lockstep = false) : IService
{
    private readonly byte[] _payload = new byte[FrameLayout.MaxPayload];
    private INodeContext _context = null!;
    private Action _tick = null!;

    public byte Id => 40;

    public string Name => "random-traffic";

    public long Received { get; private set; }

    public void Start(INodeContext context)
    {
        _context = context;
        random.NextBytes(_payload);
        _tick = Tick;
        _context.SetTimer(lockstep ? 0 : random.NextLong(200 * SimTime.Microsecond), _tick);
    }

    public void OnFrame(in InboundFrame frame)
    {
        Received++;
        int choice = random.Next(10);
        if (choice < 3 && !frame.IsLocal)
        {
            _context.TryForward(frame, (Port)random.Next(Ports.Count));
        }
        else if (choice == 3)
        {
            var header = new FrameHeader(Id, _context.Self, _context.Self);
            _context.DeliverLocal(ref header, default, frame.Payload[..Math.Min(16, frame.Payload.Length)]);
        }
    }

    private void Tick()
    {
        SendBurst();
        _context.SetTimer(lockstep ? (random.Next(4) + 1) * 50 * SimTime.Microsecond : random.NextLong(200 * SimTime.Microsecond) + 1, _tick);
    }

    /// <summary>Sends one to seven random frames on random ports now.</summary>
    public void SendBurst()
    {
        int burst = random.Next(1, 8);
        for (int i = 0; i < burst; i++)
        {
            var port = (Port)random.Next(Ports.Count);
            int length = lockstep
                ? random.Next(3) switch { 0 => 100, 1 => 1000, _ => FrameLayout.MaxPayload }
                : random.Next(10) == 0 ? FrameLayout.MaxPayload : random.Next(0, 2000);
            var header = new FrameHeader(Id, _context.Self, _context.Torus.Neighbour(_context.Self, port), ttl: (byte)random.Next(1, 4));
            _context.TrySend(port, ref header, default, _payload.AsSpan(0, length));
        }
    }
}

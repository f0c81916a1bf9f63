using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>
/// Test service: sends frames with given payload sizes to the neighbour on one port, filled with a pattern derived
/// from the size, and checks every frame it receives against that pattern. Runs on its node's event loop; the test
/// reads its state through <c>InvokeAsync</c>.
/// </summary>
internal sealed class PatternService : IService
{
    public const byte ServiceId = 42;

    private readonly Port _port;
    private readonly Queue<int> _toSend = new();
    private readonly byte[] _payload = new byte[FrameLayout.MaxPayload];
    private INodeContext? _context;

    public PatternService(Port port)
    {
        _port = port;
    }

    public byte Id => ServiceId;

    public string Name => "pattern";

    public long Sent { get; private set; }

    public long Received { get; private set; }

    public long Corrupt { get; private set; }

    /// <summary>Frames that claimed to come from this very server (our own transmissions looped back).</summary>
    public long FromSelf { get; private set; }

    public HashSet<int> SizesReceived { get; } = [];

    public int Waiting => _toSend.Count;

    public void Start(INodeContext context) => _context = context;

    public void Send(IEnumerable<int> payloadSizes)
    {
        foreach (var s in payloadSizes)
        {
            _toSend.Enqueue(s);
        }
        Pump();
    }

    public void OnFrame(in InboundFrame frame)
    {
        Received++;
        if (frame.Header.Source == _context!.Self)
        {
            FromSelf++;
        }
        var payload = frame.Payload;
        for (int i = 0; i < payload.Length; i++)
        {
            if (payload[i] != Pattern(payload.Length, i))
            {
                Corrupt++;
                return;
            }
        }
        SizesReceived.Add(payload.Length);
    }

    public void OnSendReady(Port port) => Pump();

    public void OnLinkChanged(Port port, bool up)
    {
        if (up)
        {
            Pump();
        }
    }

    public static byte Pattern(int length, int i) => (byte)(((uint)length * 2654435761u + ((uint)i * 40503u)) >> 13);

    private void Pump()
    {
        var ctx = _context;
        if (ctx is null)
        {
            return;
        }
        while (_toSend.Count > 0)
        {
            int size = _toSend.Peek();
            var payload = _payload.AsSpan(0, size);
            for (int i = 0; i < size; i++)
            {
                payload[i] = Pattern(size, i);
            }
            var header = new FrameHeader(Id, ctx.Self, ctx.Torus.Neighbour(ctx.Self, _port), ttl: 1);
            if (ctx.TrySend(_port, ref header, default, payload) != SendStatus.Queued)
            {
                return; // queue full (OnSendReady resumes) or link down (OnLinkChanged resumes)
            }
            _toSend.Dequeue();
            Sent++;
        }
    }
}

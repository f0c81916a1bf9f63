using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links;

namespace Camdoop.Runtime.Tests.Node.Fakes;

/// <summary>A link that records what it is given. Its ring accepts <see cref="Budget"/> more frames.</summary>
internal sealed class FakeLink : ILinkTransport
{
    public int Budget { get; set; } = int.MaxValue;

    public bool CarrierUp { get; set; } = true;

    public bool CanSend => CarrierUp && Budget > 0;

    /// <summary>Frames accepted, in order; the link owns them until the test releases them.</summary>
    public List<Frame> Sent { get; } = [];

    public bool TrySend(Frame frame)
    {
        if (!CanSend)
        {
            return false;
        }
        Budget--;
        Sent.Add(frame);
        return true;
    }

    public void ReleaseAll()
    {
        foreach (var f in Sent)
        {
            f.Release();
        }
        Sent.Clear();
    }
}

using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// "decommission": sets servers aside (or takes them back, <see cref="Recommission"/>), or only reports how far
/// draining has gone (<see cref="StatusOnly"/>).
/// </summary>
[MessagePackObject]
public sealed class DecommissionRequest : FrontEndRequest<DecommissionReply>
{
    public override string Op => "decommission";

    /// <summary>Servers, "x,y,z".</summary>
    [Key("servers")]
    public List<string>? Servers { get; set; }

    [Key("recommission")]
    public bool Recommission { get; set; }

    [Key("statusOnly")]
    public bool StatusOnly { get; set; }
}

/// <summary>What the cube holds as decommissioned now, and how far draining the named servers has gone.</summary>
[MessagePackObject]
public sealed class DecommissionReply : FrontEndReply
{
    /// <summary>The servers decommissioned in the front-end's view after the request.</summary>
    [Key("decommissioned")]
    public List<string> Decommissioned { get; set; } = [];

    /// <summary>Servers that did not answer the change (they keep their old view until asked again).</summary>
    [Key("unanswered")]
    public List<string> Unanswered { get; set; } = [];

    /// <summary>Replicas the named servers hold.</summary>
    [Key("replicasHeld")]
    public long ReplicasHeld { get; set; }

    /// <summary>Of those, the ones not yet held three times (or by every other live server) elsewhere.</summary>
    [Key("notYetElsewhere")]
    public long NotYetElsewhere { get; set; }

    /// <summary>Named servers that did not say what they hold.</summary>
    [Key("drainUnanswered")]
    public List<string> DrainUnanswered { get; set; } = [];

    /// <summary>Every replica the named servers hold is held three times elsewhere: they may be switched off.</summary>
    [Key("safe")]
    public bool Safe { get; set; }
}

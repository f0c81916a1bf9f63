namespace Camdoop.JobControl.Channel;

/// <summary>What a receiver made of a whole control message: acknowledge it (with an optional body), leave it unacknowledged so the sender tries again later, or count it as malformed.</summary>
public readonly record struct Delivery(DeliveryKind Kind, byte[]? AckBody = null)
{
    public static Delivery Acknowledge => new(DeliveryKind.Acknowledge);

    /// <summary>Not now (not ready for it, or not the server it was meant for yet): the sender's retry asks again.</summary>
    public static Delivery NotYet => new(DeliveryKind.NotYet);

    public static Delivery Malformed => new(DeliveryKind.Malformed);

    public static Delivery AcknowledgeWith(byte[] body) => new(DeliveryKind.Acknowledge, body);
}

public enum DeliveryKind : byte
{
    Acknowledge,
    NotYet,
    Malformed,
}

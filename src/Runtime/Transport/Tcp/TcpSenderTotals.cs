namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>Counters of several connections' senders, summed.</summary>
public readonly record struct TcpSenderTotals(
    long Connections, long SegmentsSent, long SegmentsResent, long PayloadBytesSent, long PayloadBytesResent, long Timeouts, long FastRetransmits)
{
    public TcpSenderTotals Add(TcpSender sender)
    {
        ArgumentNullException.ThrowIfNull(sender);
        return new(Connections + 1, SegmentsSent + sender.SegmentsSent, SegmentsResent + sender.SegmentsResent,
            PayloadBytesSent + sender.PayloadBytesSent, PayloadBytesResent + sender.PayloadBytesResent,
            Timeouts + sender.Timeouts, FastRetransmits + sender.FastRetransmits);
    }

    public TcpSenderTotals Add(TcpSenderTotals other) => new(Connections + other.Connections, SegmentsSent + other.SegmentsSent,
        SegmentsResent + other.SegmentsResent, PayloadBytesSent + other.PayloadBytesSent, PayloadBytesResent + other.PayloadBytesResent,
        Timeouts + other.Timeouts, FastRetransmits + other.FastRetransmits);
}

using System.Buffers.Binary;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Transport.Sockets;

/// <summary>
/// The bytes a socket stream adds around the writer's: a preamble with the opening server's coordinate, so the
/// accepting server knows which peer a connection is and drops one that is not a Camdoop stream, and a trailer, so
/// a stream whose sender died (the kernel closes a dead process's sockets as if it had finished) is told apart from
/// one that was ended. The reader answers the trailer with one byte, so a sender tells a stream read to its end
/// from one refused or dropped.
/// </summary>
internal static class StreamMarkers
{
    public const int Size = 8;

    private const uint PreambleMagic = 0x43445331; // "CDS1"
    private const ulong TrailerMagic = 0x43445345_4E440A00; // "CDSEND\n\0"

    public static void WritePreamble(Span<byte> destination, Coordinate self)
    {
        BinaryPrimitives.WriteUInt32BigEndian(destination, PreambleMagic);
        destination[4] = checked((byte)self.X);
        destination[5] = checked((byte)self.Y);
        destination[6] = checked((byte)self.Z);
        destination[7] = 0;
    }

    /// <summary>The opening server, or null when the bytes are not a preamble of a server of <paramref name="torus"/>.</summary>
    public static Coordinate? TryReadPreamble(ReadOnlySpan<byte> source, Torus torus)
    {
        if (source.Length < Size || BinaryPrimitives.ReadUInt32BigEndian(source) != PreambleMagic || source[7] != 0)
        {
            return null;
        }
        var peer = new Coordinate(source[4], source[5], source[6]);
        return torus.Contains(peer) ? peer : null;
    }

    /// <summary>The one byte a reader sends back once it has read the trailer: the sender's stream is delivered.</summary>
    public static ReadOnlyMemory<byte> Delivered { get; } = new byte[] { 0x06 };

    public static void WriteTrailer(Span<byte> destination) => BinaryPrimitives.WriteUInt64BigEndian(destination, TrailerMagic);

    public static bool IsTrailer(ReadOnlySpan<byte> source) =>
        source.Length == Size && BinaryPrimitives.ReadUInt64BigEndian(source) == TrailerMagic;
}

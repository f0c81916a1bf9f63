using System.Buffers;
using System.Buffers.Binary;

namespace Camdoop.FrontEnd.Wire;

public enum FrameReadStatus
{
    /// <summary>More bytes are needed.</summary>
    Incomplete,

    /// <summary>A whole message body was taken off the buffer.</summary>
    Complete,

    /// <summary>The length prefix announces more than the maximum message size; the stream cannot be trusted further.</summary>
    Oversized,
}

/// <summary>
/// Front-end framing: every message is a 4-byte big-endian length followed by that many bytes of MessagePack
/// (<see cref="FrontEndWire"/>).
/// Both directions use it; a length above the receiver's maximum is refused before any body byte is buffered.
/// </summary>
public static class MessageFraming
{
    public const int HeaderSize = 4;

    /// <summary>Default largest message (16 MiB): chunk data travels in parts well below it.</summary>
    public const int DefaultMaxMessageBytes = 16 << 20;

    /// <summary>Largest binary payload a sender puts in one message, leaving room for the other fields.</summary>
    public const int MaxDataPartBytes = 4 << 20;

    /// <summary>Takes one message body off the front of <paramref name="buffer"/> if it is all there.</summary>
    public static FrameReadStatus TryRead(ref ReadOnlySequence<byte> buffer, int maxMessageBytes, out ReadOnlySequence<byte> body, out long declaredLength)
    {
        body = default;
        declaredLength = 0;
        if (buffer.Length < HeaderSize)
        {
            return FrameReadStatus.Incomplete;
        }
        Span<byte> header = stackalloc byte[HeaderSize];
        buffer.Slice(0, HeaderSize).CopyTo(header);
        declaredLength = BinaryPrimitives.ReadUInt32BigEndian(header);
        if (declaredLength > maxMessageBytes)
        {
            return FrameReadStatus.Oversized;
        }
        if (buffer.Length < HeaderSize + declaredLength)
        {
            return FrameReadStatus.Incomplete;
        }
        body = buffer.Slice(HeaderSize, declaredLength);
        buffer = buffer.Slice(body.End);
        return FrameReadStatus.Complete;
    }

    /// <summary>The message (a <c>[MessagePackObject]</c>) with its length prefix, ready to write.</summary>
    public static byte[] Frame(object message) => Prefix(FrontEndWire.Serialize(message));

    /// <summary>A message body, whatever its bytes, with its length prefix.</summary>
    public static byte[] Prefix(ReadOnlySpan<byte> body)
    {
        var bytes = new byte[HeaderSize + body.Length];
        BinaryPrimitives.WriteUInt32BigEndian(bytes, (uint)body.Length);
        body.CopyTo(bytes.AsSpan(HeaderSize));
        return bytes;
    }

    /// <summary>
    /// Reads one message body from a blocking stream (the client side); null at a clean end of stream. The length is
    /// checked against <paramref name="maxMessageBytes"/> before the body is read.
    /// </summary>
    public static byte[]? Read(Stream stream, int maxMessageBytes = DefaultMaxMessageBytes)
    {
        ArgumentNullException.ThrowIfNull(stream);
        Span<byte> header = stackalloc byte[HeaderSize];
        int got = ReadFully(stream, header);
        if (got == 0)
        {
            return null;
        }
        if (got < HeaderSize)
        {
            throw new EndOfStreamException("the connection closed in the middle of a message");
        }
        uint length = BinaryPrimitives.ReadUInt32BigEndian(header);
        if (length > maxMessageBytes)
        {
            throw new InvalidDataException($"message of {length} bytes exceeds the maximum of {maxMessageBytes}");
        }
        var body = new byte[length];
        if (ReadFully(stream, body) < length)
        {
            throw new EndOfStreamException("the connection closed in the middle of a message");
        }
        return body;
    }

    private static int ReadFully(Stream stream, Span<byte> destination)
    {
        int total = 0;
        while (total < destination.Length)
        {
            int n = stream.Read(destination[total..]);
            if (n == 0)
            {
                break;
            }
            total += n;
        }
        return total;
    }
}

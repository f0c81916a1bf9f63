using System.Buffers;
using System.Text.Unicode;
using MessagePack;

namespace Camdoop.FrontEnd.Wire;

/// <summary>
/// The structural check every received message passes before it is deserialized: one MessagePack map with string
/// keys (at every level), no extension types, nesting at most <see cref="MaxDepth"/> containers, every array and map
/// count within <see cref="MaxCollectionCount"/> and the bytes left, every length inside the message, strings valid
/// UTF-8, nothing after the map. MessagePack-CSharp in untrusted-data mode bounds the depth of what it builds, but
/// it skips unknown fields whatever their depth, accepts extension types there, replaces bad UTF-8 and ignores
/// trailing bytes; this pass makes all of those one clear <see cref="InvalidDataException"/> instead. It walks the
/// message iteratively with the library's reader, so no input can exhaust the stack.
/// </summary>
public static class WireValidator
{
    /// <summary>Deepest nesting of maps and arrays, the message itself included.</summary>
    public const int MaxDepth = 16;

    /// <summary>Most items in one array or map.</summary>
    public const int MaxCollectionCount = 1 << 20;

    /// <summary>Throws <see cref="InvalidDataException"/> ("malformed message: ...") unless the bytes are one well-formed message.</summary>
    public static void Validate(in ReadOnlySequence<byte> body)
    {
        var reader = new MessagePackReader(body);
        if (reader.End || reader.NextMessagePackType != MessagePackType.Map)
        {
            throw Bad("a message must be a MessagePack map");
        }
        Span<long> left = stackalloc long[MaxDepth];
        Span<bool> isMap = stackalloc bool[MaxDepth];
        int depth = 0;
        try
        {
            do
            {
                bool key = depth > 0 && isMap[depth - 1] && left[depth - 1] % 2 == 0;
                if (depth > 0)
                {
                    left[depth - 1]--;
                }
                if (reader.End)
                {
                    throw Bad("message ends early");
                }
                byte code = reader.NextCode;
                var type = reader.NextMessagePackType;
                if (key && type != MessagePackType.String)
                {
                    throw Bad("map keys must be strings");
                }
                switch (type)
                {
                    case MessagePackType.Map:
                    case MessagePackType.Array:
                        bool map = type == MessagePackType.Map;
                        int count;
                        if (!(map ? reader.TryReadMapHeader(out count) : reader.TryReadArrayHeader(out count)))
                        {
                            throw Bad("message ends early");
                        }
                        if (count < 0 || count > MaxCollectionCount || count > body.Length - reader.Consumed)
                        {
                            throw Bad($"collection of {(uint)count} items cannot fit the message");
                        }
                        if (depth == MaxDepth)
                        {
                            throw Bad($"nesting deeper than {MaxDepth}");
                        }
                        left[depth] = map ? 2L * count : count;
                        isMap[depth] = map;
                        depth++;
                        break;
                    case MessagePackType.String:
                        if (reader.ReadStringSequence() is { } text && !IsValidUtf8(text))
                        {
                            throw Bad("a string is not valid UTF-8");
                        }
                        break;
                    case MessagePackType.Extension:
                        throw Bad("extension types are refused");
                    case MessagePackType.Unknown:
                        throw Bad($"unsupported MessagePack type 0x{code:x2}");
                    default:
                        reader.Skip();
                        break;
                }
                while (depth > 0 && left[depth - 1] == 0)
                {
                    depth--;
                }
            }
            while (depth > 0);
        }
        catch (Exception e) when (e is EndOfStreamException or ArgumentOutOfRangeException)
        {
            throw Bad("a length runs past the end of the message");
        }
        catch (MessagePackSerializationException e)
        {
            throw Bad(e.Message);
        }
        if (!reader.End)
        {
            throw Bad("bytes after the end of the map");
        }
    }

    private static bool IsValidUtf8(in ReadOnlySequence<byte> text)
    {
        if (text.IsSingleSegment)
        {
            return Utf8.IsValid(text.FirstSpan);
        }
        byte[] copy = ArrayPool<byte>.Shared.Rent((int)text.Length);
        try
        {
            text.CopyTo(copy);
            return Utf8.IsValid(copy.AsSpan(0, (int)text.Length));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(copy);
        }
    }

    private static InvalidDataException Bad(string message) => new($"malformed message: {message}");
}

using System.Buffers.Binary;
using System.Text;

namespace Camdoop.MapReduce.FrontEnd.Wire;

/// <summary>The next value's MessagePack type family.</summary>
public enum MessagePackType
{
    Nil,
    Boolean,
    Integer,
    Float,
    String,
    Binary,
    Array,
    Map,
    Unsupported,
}

/// <summary>
/// Reads MessagePack from untrusted bytes: every length is checked against what remains and against limits,
/// nesting depth is bounded, extension types are refused, and any violation is a <see cref="InvalidDataException"/>
/// with a clear message (never an out-of-range crash). A reader over one complete message.
/// </summary>
public ref struct MessagePackReader
{
    public const int MaxDepth = 32;
    public const int MaxCollectionCount = 1 << 20;

    private readonly ReadOnlySpan<byte> _data;
    private int _pos;

    public MessagePackReader(ReadOnlySpan<byte> data)
    {
        _data = data;
        _pos = 0;
    }

    public readonly int Position => _pos;

    public readonly bool End => _pos >= _data.Length;

    public readonly MessagePackType PeekType()
    {
        byte b = Peek();
        return b switch
        {
            0xc0 => MessagePackType.Nil,
            0xc2 or 0xc3 => MessagePackType.Boolean,
            <= 0x7f or >= 0xe0 or (>= 0xcc and <= 0xd3) => MessagePackType.Integer,
            0xca or 0xcb => MessagePackType.Float,
            (>= 0xa0 and <= 0xbf) or 0xd9 or 0xda or 0xdb => MessagePackType.String,
            0xc4 or 0xc5 or 0xc6 => MessagePackType.Binary,
            (>= 0x90 and <= 0x9f) or 0xdc or 0xdd => MessagePackType.Array,
            (>= 0x80 and <= 0x8f) or 0xde or 0xdf => MessagePackType.Map,
            _ => MessagePackType.Unsupported,
        };
    }

    public bool TryReadNil()
    {
        if (Peek() == 0xc0)
        {
            _pos++;
            return true;
        }
        return false;
    }

    public bool ReadBoolean()
    {
        byte b = Take();
        return b switch
        {
            0xc2 => false,
            0xc3 => true,
            _ => throw Bad($"expected a boolean, found 0x{b:x2}"),
        };
    }

    public long ReadInt64()
    {
        byte b = Take();
        if (b <= 0x7f)
        {
            return b;
        }
        if (b >= 0xe0)
        {
            return (sbyte)b;
        }
        return b switch
        {
            0xcc => Take(),
            0xcd => BinaryPrimitives.ReadUInt16BigEndian(TakeSpan(2)),
            0xce => BinaryPrimitives.ReadUInt32BigEndian(TakeSpan(4)),
            0xcf => checked((long)BinaryPrimitives.ReadUInt64BigEndian(TakeSpan(8))),
            0xd0 => (sbyte)Take(),
            0xd1 => BinaryPrimitives.ReadInt16BigEndian(TakeSpan(2)),
            0xd2 => BinaryPrimitives.ReadInt32BigEndian(TakeSpan(4)),
            0xd3 => BinaryPrimitives.ReadInt64BigEndian(TakeSpan(8)),
            _ => throw Bad($"expected an integer, found 0x{b:x2}"),
        };
    }

    /// <summary>An unsigned integer: the full 64-bit range (checksums, ids); negative values are refused.</summary>
    public ulong ReadUInt64()
    {
        if (Peek() == 0xcf)
        {
            _pos++;
            return BinaryPrimitives.ReadUInt64BigEndian(TakeSpan(8));
        }
        long v = ReadInt64();
        return v >= 0 ? (ulong)v : throw Bad($"expected an unsigned integer, found {v}");
    }

    public int ReadInt32()
    {
        long v = ReadInt64();
        return v is >= int.MinValue and <= int.MaxValue ? (int)v : throw Bad($"integer {v} out of range");
    }

    public double ReadDouble()
    {
        byte b = Peek();
        return b switch
        {
            0xcb => BinaryPrimitives.ReadDoubleBigEndian(TakeSpan(9)[1..]),
            0xca => BinaryPrimitives.ReadSingleBigEndian(TakeSpan(5)[1..]),
            _ => ReadInt64(),
        };
    }

    public string? ReadString()
    {
        if (TryReadNil())
        {
            return null;
        }
        byte b = Take();
        int length = b switch
        {
            >= 0xa0 and <= 0xbf => b & 0x1f,
            0xd9 => Take(),
            0xda => BinaryPrimitives.ReadUInt16BigEndian(TakeSpan(2)),
            0xdb => Length(BinaryPrimitives.ReadUInt32BigEndian(TakeSpan(4))),
            _ => throw Bad($"expected a string, found 0x{b:x2}"),
        };
        var bytes = TakeSpan(length);
        try
        {
            return new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(bytes);
        }
        catch (DecoderFallbackException)
        {
            throw Bad("a string is not valid UTF-8");
        }
    }

    public ReadOnlySpan<byte> ReadBinary()
    {
        byte b = Take();
        int length = b switch
        {
            0xc4 => Take(),
            0xc5 => BinaryPrimitives.ReadUInt16BigEndian(TakeSpan(2)),
            0xc6 => Length(BinaryPrimitives.ReadUInt32BigEndian(TakeSpan(4))),
            _ => throw Bad($"expected binary data, found 0x{b:x2}"),
        };
        return TakeSpan(length);
    }

    public int ReadArrayHeader()
    {
        byte b = Take();
        int count = b switch
        {
            >= 0x90 and <= 0x9f => b & 0x0f,
            0xdc => BinaryPrimitives.ReadUInt16BigEndian(TakeSpan(2)),
            0xdd => Length(BinaryPrimitives.ReadUInt32BigEndian(TakeSpan(4))),
            _ => throw Bad($"expected an array, found 0x{b:x2}"),
        };
        return CheckCount(count);
    }

    public int ReadMapHeader()
    {
        byte b = Take();
        int count = b switch
        {
            >= 0x80 and <= 0x8f => b & 0x0f,
            0xde => BinaryPrimitives.ReadUInt16BigEndian(TakeSpan(2)),
            0xdf => Length(BinaryPrimitives.ReadUInt32BigEndian(TakeSpan(4))),
            _ => throw Bad($"expected a map, found 0x{b:x2}"),
        };
        return CheckCount(count);
    }

    /// <summary>Skips one value of any supported type (unknown map keys are skipped this way).</summary>
    public void Skip() => Skip(0);

    private void Skip(int depth)
    {
        if (depth > MaxDepth)
        {
            throw Bad($"nesting deeper than {MaxDepth}");
        }
        switch (PeekType())
        {
            case MessagePackType.Nil:
                _pos++;
                break;
            case MessagePackType.Boolean:
                ReadBoolean();
                break;
            case MessagePackType.Integer:
                if (Peek() == 0xcf)
                {
                    TakeSpan(9);
                }
                else
                {
                    ReadInt64();
                }
                break;
            case MessagePackType.Float:
                ReadDouble();
                break;
            case MessagePackType.String:
                ReadString();
                break;
            case MessagePackType.Binary:
                ReadBinary();
                break;
            case MessagePackType.Array:
                for (int n = ReadArrayHeader(); n > 0; n--)
                {
                    Skip(depth + 1);
                }
                break;
            case MessagePackType.Map:
                for (int n = ReadMapHeader(); n > 0; n--)
                {
                    Skip(depth + 1);
                    Skip(depth + 1);
                }
                break;
            default:
                throw Bad($"unsupported MessagePack type 0x{Peek():x2}");
        }
    }

    private readonly byte Peek() => _pos < _data.Length ? _data[_pos] : throw Bad("message ends early");

    private byte Take()
    {
        byte b = Peek();
        _pos++;
        return b;
    }

    private ReadOnlySpan<byte> TakeSpan(int length)
    {
        if (length < 0 || length > _data.Length - _pos)
        {
            throw Bad("a length runs past the end of the message");
        }
        var s = _data.Slice(_pos, length);
        _pos += length;
        return s;
    }

    private static int Length(uint length) => length <= int.MaxValue ? (int)length : throw Bad("length too large");

    private readonly int CheckCount(int count) =>
        count <= MaxCollectionCount && count <= _data.Length - _pos ? count : throw Bad($"collection of {count} items cannot fit the message");

    private static InvalidDataException Bad(string message) => new($"malformed message: {message}");
}

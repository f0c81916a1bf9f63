using System.Buffers;
using System.Buffers.Binary;
using System.Text;

namespace Camdoop.MapReduce.FrontEnd.Wire;

/// <summary>
/// Writes the subset of MessagePack the front-end protocol uses (nil, bool, integers, float64, str, bin, array,
/// map), always choosing the shortest encoding. The MessagePack package is not served here, so this is
/// hand-written to the spec (https://github.com/msgpack/msgpack/blob/master/spec.md).
/// </summary>
public sealed class MessagePackWriter
{
    private readonly IBufferWriter<byte> _output;

    public MessagePackWriter(IBufferWriter<byte> output)
    {
        _output = output;
    }

    public void WriteNil() => WriteByte(0xc0);

    public void Write(bool value) => WriteByte(value ? (byte)0xc3 : (byte)0xc2);

    public void Write(long value)
    {
        if (value >= 0)
        {
            Write((ulong)value);
            return;
        }
        if (value >= -32)
        {
            WriteByte((byte)(sbyte)value);
        }
        else if (value >= sbyte.MinValue)
        {
            var s = _output.GetSpan(2);
            s[0] = 0xd0;
            s[1] = (byte)(sbyte)value;
            _output.Advance(2);
        }
        else if (value >= short.MinValue)
        {
            var s = _output.GetSpan(3);
            s[0] = 0xd1;
            BinaryPrimitives.WriteInt16BigEndian(s[1..], (short)value);
            _output.Advance(3);
        }
        else if (value >= int.MinValue)
        {
            var s = _output.GetSpan(5);
            s[0] = 0xd2;
            BinaryPrimitives.WriteInt32BigEndian(s[1..], (int)value);
            _output.Advance(5);
        }
        else
        {
            var s = _output.GetSpan(9);
            s[0] = 0xd3;
            BinaryPrimitives.WriteInt64BigEndian(s[1..], value);
            _output.Advance(9);
        }
    }

    public void Write(ulong value)
    {
        if (value <= 0x7f)
        {
            WriteByte((byte)value);
        }
        else if (value <= byte.MaxValue)
        {
            var s = _output.GetSpan(2);
            s[0] = 0xcc;
            s[1] = (byte)value;
            _output.Advance(2);
        }
        else if (value <= ushort.MaxValue)
        {
            var s = _output.GetSpan(3);
            s[0] = 0xcd;
            BinaryPrimitives.WriteUInt16BigEndian(s[1..], (ushort)value);
            _output.Advance(3);
        }
        else if (value <= uint.MaxValue)
        {
            var s = _output.GetSpan(5);
            s[0] = 0xce;
            BinaryPrimitives.WriteUInt32BigEndian(s[1..], (uint)value);
            _output.Advance(5);
        }
        else
        {
            var s = _output.GetSpan(9);
            s[0] = 0xcf;
            BinaryPrimitives.WriteUInt64BigEndian(s[1..], value);
            _output.Advance(9);
        }
    }

    public void Write(double value)
    {
        var s = _output.GetSpan(9);
        s[0] = 0xcb;
        BinaryPrimitives.WriteDoubleBigEndian(s[1..], value);
        _output.Advance(9);
    }

    public void Write(string? value)
    {
        if (value is null)
        {
            WriteNil();
            return;
        }
        int length = Encoding.UTF8.GetByteCount(value);
        WriteHeader(length, fix: 0xa0, fixMax: 31, b8: 0xd9, b16: 0xda, b32: 0xdb);
        var s = _output.GetSpan(length);
        Encoding.UTF8.GetBytes(value, s);
        _output.Advance(length);
    }

    public void WriteBinary(ReadOnlySpan<byte> value)
    {
        WriteHeader(value.Length, fix: -1, fixMax: -1, b8: 0xc4, b16: 0xc5, b32: 0xc6);
        value.CopyTo(_output.GetSpan(value.Length));
        _output.Advance(value.Length);
    }

    public void WriteArrayHeader(int count) => WriteHeader(count, fix: 0x90, fixMax: 15, b8: -1, b16: 0xdc, b32: 0xdd);

    public void WriteMapHeader(int count) => WriteHeader(count, fix: 0x80, fixMax: 15, b8: -1, b16: 0xde, b32: 0xdf);

    private void WriteHeader(int length, int fix, int fixMax, int b8, int b16, int b32)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        if (fix >= 0 && length <= fixMax)
        {
            WriteByte((byte)(fix | length));
        }
        else if (b8 >= 0 && length <= byte.MaxValue)
        {
            var s = _output.GetSpan(2);
            s[0] = (byte)b8;
            s[1] = (byte)length;
            _output.Advance(2);
        }
        else if (length <= ushort.MaxValue)
        {
            var s = _output.GetSpan(3);
            s[0] = (byte)b16;
            BinaryPrimitives.WriteUInt16BigEndian(s[1..], (ushort)length);
            _output.Advance(3);
        }
        else
        {
            var s = _output.GetSpan(5);
            s[0] = (byte)b32;
            BinaryPrimitives.WriteUInt32BigEndian(s[1..], (uint)length);
            _output.Advance(5);
        }
    }

    private void WriteByte(byte b)
    {
        _output.GetSpan(1)[0] = b;
        _output.Advance(1);
    }
}

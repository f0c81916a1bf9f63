using System.Buffers.Binary;
using System.Text;
using System.Text.Unicode;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;

namespace Camdoop.JobControl.Wire;

/// <summary>
/// The frames of job control (payload of service <see cref="Runtime.Node.WellKnownServices.JobControl"/>), big-endian:
/// <c>kind (1) | job id (8) | extra (4) | fragment (1) | fragments (1) | body</c>. A message longer than a frame is
/// cut into up to 255 fragments, each acknowledged on its own; <c>extra</c> names the message among those of its kind
/// and job (the attempt, a reduce task, a sequence number, a query id). Strings are u16 length + UTF-8. Every reader
/// checks lengths and reports malformed input instead of throwing.
/// </summary>
public static class ControlWire
{
    public const int HeaderSize = 15;

    /// <summary>The largest job-control frame payload.</summary>
    public const int MaxPayload = FrameLayout.MaxPayload;

    /// <summary>Body bytes one fragment carries.</summary>
    public const int MaxFragmentBody = MaxPayload - HeaderSize;

    /// <summary>Fragments one message may have: the longest message is about 2 MB.</summary>
    public const int MaxFragments = 255;

    /// <summary>The body of an End that also discards the job's output here (a killed job, or an attempt started over).</summary>
    public const byte EndDiscardOutput = 1;

    /// <summary>
    /// The body of an End after the job completed (every reduce task stored): a server whose part had not yet seen its
    /// streams' last acknowledgements still counts its part finished, not stopped.
    /// </summary>
    public const byte EndCompleted = 2;

    /// <summary>Reads a frame's header; false when it is not one (too short, unknown kind, bad fragment numbers).</summary>
    public static bool TryReadHeader(ReadOnlySpan<byte> payload, out ControlHeader header)
    {
        header = default;
        if (payload.Length < HeaderSize || payload[0] is 0 or > (byte)JobMessage.QueryReply)
        {
            return false;
        }
        int fragment = payload[13], fragments = payload[14];
        if (fragments == 0 || fragment >= fragments)
        {
            return false;
        }
        header = new ControlHeader((JobMessage)payload[0], BinaryPrimitives.ReadUInt64BigEndian(payload[1..]),
            BinaryPrimitives.ReadUInt32BigEndian(payload[9..]), fragment, fragments);
        return true;
    }

    public static void WriteHeader(Span<byte> destination, in ControlHeader header)
    {
        destination[0] = (byte)header.Kind;
        BinaryPrimitives.WriteUInt64BigEndian(destination[1..], header.JobId);
        BinaryPrimitives.WriteUInt32BigEndian(destination[9..], header.Extra);
        destination[13] = (byte)header.Fragment;
        destination[14] = (byte)header.Fragments;
    }

    /// <summary>A growable big-endian writer for message bodies (control messages are rare: they may allocate).</summary>
    public sealed class Writer
    {
        private byte[] _buffer;
        private int _length;

        public Writer(int capacity = 256)
        {
            _buffer = new byte[capacity];
        }

        public int Length => _length;

        public ReadOnlySpan<byte> Written => _buffer.AsSpan(0, _length);

        public byte[] ToArray() => Written.ToArray();

        public void U8(byte v) => Take(1)[0] = v;

        public void Bool(bool v) => U8(v ? (byte)1 : (byte)0);

        public void U16(int v) => BinaryPrimitives.WriteUInt16BigEndian(Take(2), checked((ushort)v));

        public void U32(uint v) => BinaryPrimitives.WriteUInt32BigEndian(Take(4), v);

        public void I32(int v) => BinaryPrimitives.WriteInt32BigEndian(Take(4), v);

        public void U64(ulong v) => BinaryPrimitives.WriteUInt64BigEndian(Take(8), v);

        public void I64(long v) => BinaryPrimitives.WriteInt64BigEndian(Take(8), v);

        public void Key(in Key key) => key.Write(Take(KeyRouting.Key.Size));

        /// <summary>A length-prefixed byte string (u32 length: descriptions and records may exceed 64 KB).</summary>
        public void Bytes(ReadOnlySpan<byte> bytes)
        {
            U32((uint)bytes.Length);
            bytes.CopyTo(Take(bytes.Length));
        }

        /// <summary>A string, cut to 1,000 characters (reasons and names are for people).</summary>
        public void String(string? text)
        {
            text ??= "";
            if (text.Length > 1000)
            {
                text = text[..1000];
            }
            int n = Encoding.UTF8.GetByteCount(text);
            U16(n);
            Encoding.UTF8.GetBytes(text, Take(n));
        }

        public void OptionalString(string? text)
        {
            Bool(text is not null);
            if (text is not null)
            {
                String(text);
            }
        }

        private Span<byte> Take(int n)
        {
            if (_buffer.Length - _length < n)
            {
                Array.Resize(ref _buffer, Math.Max(_buffer.Length * 2, _length + n));
            }
            var span = _buffer.AsSpan(_length, n);
            _length += n;
            return span;
        }
    }

    /// <summary>Sequential reader over untrusted bytes: every read checks the length; <see cref="Ok"/> turns false instead of throwing.</summary>
    public ref struct Reader(ReadOnlySpan<byte> source)
    {
        private readonly ReadOnlySpan<byte> _s = source;
        private int _p;

        public bool Ok { get; private set; } = true;

        public readonly bool AtEnd => _p == _s.Length;

        public readonly int Remaining => _s.Length - _p;

        /// <summary>Marks the input malformed (a value out of range).</summary>
        public void Fail() => Ok = false;

        public byte U8() => Take(1) ? _s[_p - 1] : (byte)0;

        public bool Bool()
        {
            byte b = U8();
            if (b > 1)
            {
                Ok = false;
            }
            return b == 1;
        }

        public int U16() => Take(2) ? BinaryPrimitives.ReadUInt16BigEndian(_s[(_p - 2)..]) : 0;

        public uint U32() => Take(4) ? BinaryPrimitives.ReadUInt32BigEndian(_s[(_p - 4)..]) : 0;

        public int I32() => Take(4) ? BinaryPrimitives.ReadInt32BigEndian(_s[(_p - 4)..]) : 0;

        public ulong U64() => Take(8) ? BinaryPrimitives.ReadUInt64BigEndian(_s[(_p - 8)..]) : 0;

        /// <summary>A signed count or size: negative is malformed.</summary>
        public long I64()
        {
            long v = Take(8) ? BinaryPrimitives.ReadInt64BigEndian(_s[(_p - 8)..]) : 0;
            if (v < 0)
            {
                Ok = false;
            }
            return v;
        }

        /// <summary>A signed value that may be negative (times).</summary>
        public long Signed64() => Take(8) ? BinaryPrimitives.ReadInt64BigEndian(_s[(_p - 8)..]) : 0;

        public Key Key() => Take(KeyRouting.Key.Size) ? KeyRouting.Key.Read(_s[(_p - KeyRouting.Key.Size)..]) : default;

        public ReadOnlySpan<byte> Bytes()
        {
            uint n = U32();
            return n <= (uint)Remaining && Take((int)n) ? _s.Slice(_p - (int)n, (int)n) : default;
        }

        public string String()
        {
            int n = U16();
            if (!Take(n))
            {
                return "";
            }
            var bytes = _s.Slice(_p - n, n);
            if (!Utf8.IsValid(bytes))
            {
                Ok = false;
                return "";
            }
            return Encoding.UTF8.GetString(bytes);
        }

        public string? OptionalString() => Bool() ? String() : null;

        /// <summary>A count of items that each take at least <paramref name="minItemBytes"/>: more than the bytes left is malformed.</summary>
        public int Count(int minItemBytes)
        {
            uint n = U32();
            if (minItemBytes > 0 && n > (uint)(Remaining / minItemBytes))
            {
                Ok = false;
                return 0;
            }
            return (int)n;
        }

        private bool Take(int n)
        {
            if (!Ok || n < 0 || _s.Length - _p < n)
            {
                Ok = false;
                return false;
            }
            _p += n;
            return true;
        }
    }
}

/// <summary>A job-control frame's header.</summary>
public readonly record struct ControlHeader(JobMessage Kind, ulong JobId, uint Extra, int Fragment, int Fragments);

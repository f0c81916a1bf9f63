using System.Buffers.Binary;
using System.Text;
using System.Text.Unicode;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;

namespace Camdoop.FrontEnd.Jobs;

/// <summary>Job control messages between a front-end (the job's coordinator) and every server.</summary>
public enum JobMessage : byte
{
    /// <summary>Coordinator to server: description | output dataset | the chunk ids this server maps.</summary>
    Start = 1,

    /// <summary>Server to coordinator: the map phase ended (status, input and intermediate sizes, map time).</summary>
    MapDone = 2,

    /// <summary>Coordinator to server: every server has mapped; start the shuffle (the Camdoop paper, §4: synchronous start).</summary>
    Shuffle = 3,

    /// <summary>Server to coordinator, periodic and unacknowledged: bytes this server's vertices delivered so far.</summary>
    Progress = 4,

    /// <summary>Server to coordinator: a reduce task rooted here finished (sizes, checksum, where its output is).</summary>
    ReduceDone = 5,

    /// <summary>Server to coordinator: the job failed here.</summary>
    Failed = 6,

    /// <summary>
    /// Coordinator to server: the job is over everywhere; drop its state and map outputs. An optional body byte
    /// <see cref="JobControlWire.EndDiscardOutput"/> (the job was killed) also deletes its partial reduce outputs.
    /// </summary>
    End = 7,

    /// <summary>Acknowledges a message of the kind (and reduce task) it names.</summary>
    Ack = 8,
}

/// <summary>A reduce task's result as reported to the coordinator.</summary>
public sealed record ReduceReport(int ReduceTask, long Records, long LogicalBytes, long FileBytes, ulong Checksum, string? OutputPath, Key? Chunk, long ChunkLength, ulong ChunkChecksum);

/// <summary>
/// What one server did for a job, in its progress reports and its acknowledgement of the job's end: bytes its vertices
/// delivered, bytes sent again to recover, lost servers' map tasks run again and vertices taken over there.
/// </summary>
public readonly record struct WorkerTotals(long Delivered, long Resent, int MapTasksRerun, int VerticesAdopted)
{
    internal void Write(ref JobControlWire.Writer w)
    {
        w.I64(Delivered);
        w.I64(Resent);
        w.U32((uint)MapTasksRerun);
        w.U32((uint)VerticesAdopted);
    }

    internal static WorkerTotals Read(ref JobControlWire.Reader r) => new(r.I64(), r.I64(), (int)r.U32(), (int)r.U32());
}

/// <summary>A server's map phase as reported to the coordinator.</summary>
public sealed record MapReport(bool Ok, int MapTasks, long InputBytes, long InputRecords, long IntermediateBytes, long MapNanoseconds, string? Error);

/// <summary>
/// Encoding of the job control frames (payload of service <see cref="Runtime.Node.WellKnownServices.JobControl"/>,
/// coordinate-routed): <c>kind (1) | job id (8) | body</c>, big-endian, strings as u16 length + UTF-8. Every reader
/// checks lengths and returns false on malformed input.
/// </summary>
public static class JobControlWire
{
    public const int HeaderSize = 9;
    public const int MaxPayload = FrameLayout.MaxPayload;

    /// <summary>The body of an End that also discards the job's output (a killed job).</summary>
    public const byte EndDiscardOutput = 1;

    public static bool TryReadHeader(ReadOnlySpan<byte> payload, out JobMessage kind, out ulong jobId)
    {
        kind = 0;
        jobId = 0;
        if (payload.Length < HeaderSize || payload[0] is 0 or > (byte)JobMessage.Ack)
        {
            return false;
        }
        kind = (JobMessage)payload[0];
        jobId = BinaryPrimitives.ReadUInt64BigEndian(payload[1..]);
        return true;
    }

    public static Writer Begin(Span<byte> destination, JobMessage kind, ulong jobId)
    {
        var w = new Writer(destination);
        w.U8((byte)kind);
        w.U64(jobId);
        return w;
    }

    public static Reader Body(ReadOnlySpan<byte> payload) => new(payload[HeaderSize..]);

    /// <summary>Sequential big-endian writer; throws when the frame would overflow (a bug, not input).</summary>
    public ref struct Writer(Span<byte> destination)
    {
        private readonly Span<byte> _d = destination;
        private int _p;

        public readonly int Length => _p;

        public void U8(byte v) => _d[_p++] = v;

        public void U16(int v)
        {
            BinaryPrimitives.WriteUInt16BigEndian(_d[_p..], checked((ushort)v));
            _p += 2;
        }

        public void U32(uint v)
        {
            BinaryPrimitives.WriteUInt32BigEndian(_d[_p..], v);
            _p += 4;
        }

        public void U64(ulong v)
        {
            BinaryPrimitives.WriteUInt64BigEndian(_d[_p..], v);
            _p += 8;
        }

        public void I64(long v) => U64((ulong)v);

        public void Key(in Key key)
        {
            key.Write(_d[_p..]);
            _p += KeyRouting.Key.Size;
        }

        public void Bytes(ReadOnlySpan<byte> bytes)
        {
            U16(bytes.Length);
            bytes.CopyTo(_d[_p..]);
            _p += bytes.Length;
        }

        public void String(string? text)
        {
            text ??= "";
            int n = Encoding.UTF8.GetByteCount(text);
            if (n > 1024)
            {
                text = text[..Math.Min(text.Length, 1000)];
                n = Encoding.UTF8.GetByteCount(text);
            }
            U16(n);
            Encoding.UTF8.GetBytes(text, _d[_p..]);
            _p += n;
        }
    }

    /// <summary>Sequential reader over untrusted bytes: every read checks the length; <see cref="Ok"/> turns false instead of throwing.</summary>
    public ref struct Reader(ReadOnlySpan<byte> source)
    {
        private readonly ReadOnlySpan<byte> _s = source;
        private int _p;

        public bool Ok { get; private set; } = true;

        public readonly bool AtEnd => _p == _s.Length;

        public byte U8() => Take(1) ? _s[_p - 1] : (byte)0;

        public int U16() => Take(2) ? BinaryPrimitives.ReadUInt16BigEndian(_s[(_p - 2)..]) : 0;

        public uint U32() => Take(4) ? BinaryPrimitives.ReadUInt32BigEndian(_s[(_p - 4)..]) : 0;

        public ulong U64() => Take(8) ? BinaryPrimitives.ReadUInt64BigEndian(_s[(_p - 8)..]) : 0;

        public long I64()
        {
            long v = (long)U64();
            if (v < 0)
            {
                Ok = false;
            }
            return v;
        }

        public Key Key() => Take(KeyRouting.Key.Size) ? KeyRouting.Key.Read(_s[(_p - KeyRouting.Key.Size)..]) : default;

        public ReadOnlySpan<byte> Bytes()
        {
            int n = U16();
            return Take(n) ? _s.Slice(_p - n, n) : default;
        }

        public string String()
        {
            var bytes = Bytes();
            if (!Utf8.IsValid(bytes))
            {
                Ok = false;
                return "";
            }
            return Encoding.UTF8.GetString(bytes);
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

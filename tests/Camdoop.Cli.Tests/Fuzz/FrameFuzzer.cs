using System.Buffers.Binary;
using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Tests.Fuzz;

/// <summary>What a fuzzed frame is wrong in, and the status.json counter (group, name) the node must count it in.</summary>
internal enum FuzzKind
{
    Truncated,
    TruncatedKey,
    WrongVersion,
    BadFlags,
    BadLength,
    BadCoordinate,
    UnknownService,
    Oversize,
    TtlExpired,
    BadBeacon,
    BadLinkState,
    BadPing,
    ShuffleTruncated,
    ShuffleWrongVersion,
    ShuffleUnknownKind,
    ShuffleBadCount,
    ShuffleUnknownJob,
    BadChunkMessage,
    StrayChunkReply,
    BadJobControl,

    /// <summary>Random bytes behind a CamCube EtherType: rejected by the runtime, for whichever reason comes first.</summary>
    Random,
}

/// <summary>
/// Makes frames that a node must drop: real CamCube frames (built with the product's own encoder, as a neighbour
/// would send them) with one thing wrong, each aimed at the node under test so that it is that node which reads
/// it, plus random bytes. Deterministic for a seed. Every frame is wrong on purpose: none could be taken as data of
/// a running job (job ids are random, reserved fields or lengths are broken), so the job's output must not change.
/// </summary>
internal sealed class FrameFuzzer
{
    public static readonly FuzzKind[] Kinds = Enum.GetValues<FuzzKind>();

    // Header offsets, as docs/wire-formats.md lays the frame out.
    private const int OffsetEtherType = 12;
    private const int OffsetVersion = 14;
    private const int OffsetFlags = 16;
    private const int OffsetSource = 18;
    private const int OffsetPayloadLength = 24;

    private readonly Random _random;
    private readonly Torus _torus;
    private readonly Coordinate _target;
    private readonly Coordinate _neighbour;
    private readonly Coordinate _far;
    private readonly byte[] _targetKey = new byte[FrameLayout.KeySize];
    private readonly byte[] _payload = new byte[FrameLayout.MaxPayload];

    /// <param name="seed"></param>

    /// <param name="torus"></param>    /// <param name="target">The node under test.</param>
    /// <param name="neighbour">The server at the other end of the link the frames arrive on.</param>
    public FrameFuzzer(int seed, Torus torus, Coordinate target, Coordinate neighbour)
    {
        _random = new Random(seed);
        _torus = torus;
        _target = target;
        _neighbour = neighbour;
        // Two hops from the target: a frame to it must be forwarded, so a TTL of 1 runs out at the target.
        _far = torus.Neighbour(torus.Neighbour(target, Port.YPlus), Port.ZPlus);
        Key.FromCoordinate(torus, target, new byte[Key.SuffixSize]).Write(_targetKey);
    }

    /// <summary>The status.json counter (group, name) that counts frames of <paramref name="kind"/>; null for random ones.</summary>
    public static (string Group, string Name)? CounterOf(FuzzKind kind) => kind switch
    {
        FuzzKind.Truncated or FuzzKind.TruncatedKey => ("node", "rejectedTruncated"),
        FuzzKind.WrongVersion => ("node", "rejectedWrongVersion"),
        FuzzKind.BadFlags => ("node", "rejectedBadFlags"),
        FuzzKind.BadLength => ("node", "rejectedBadLength"),
        FuzzKind.BadCoordinate => ("node", "rejectedBadCoordinate"),
        FuzzKind.UnknownService => ("node", "rejectedUnknownService"),
        FuzzKind.Oversize => ("node", "rejectedOversize"),
        FuzzKind.TtlExpired => ("node", "rejectedTtlExpired"),
        FuzzKind.BadBeacon => ("node", "malformedBeacons"),
        FuzzKind.BadLinkState => ("routing", "malformedControl"),
        FuzzKind.BadPing => ("ping", "unexpected"),
        FuzzKind.ShuffleTruncated => ("camdoop", "malformedTruncated"),
        FuzzKind.ShuffleWrongVersion => ("camdoop", "malformedWrongVersion"),
        FuzzKind.ShuffleUnknownKind => ("camdoop", "malformedUnknownKind"),
        FuzzKind.ShuffleBadCount => ("camdoop", "malformedBadCount"),
        FuzzKind.ShuffleUnknownJob => ("camdoop", "unknownJob"),
        FuzzKind.BadChunkMessage => ("chunkStore", "malformed"),
        FuzzKind.StrayChunkReply => ("chunkStore", "unknownTransfers"),
        FuzzKind.BadJobControl => ("jobControl", "malformed"),
        _ => null,
    };

    /// <summary>Writes the next frame into <paramref name="frame"/> (at least 9,216 bytes) and returns its length.</summary>
    public int Next(byte[] frame, out FuzzKind kind)
    {
        kind = Kinds[_random.Next(Kinds.Length)];
        int length = Build(frame, kind);
        // Destination broadcast (as beacons are), source a random locally administered address.
        frame.AsSpan(0, 6).Fill(0xFF);
        _random.NextBytes(frame.AsSpan(6, 6));
        frame[6] = (byte)((frame[6] | 0x02) & 0xFE);
        return length;
    }

    private int Build(byte[] frame, FuzzKind kind)
    {
        var r = _random;
        switch (kind)
        {
            case FuzzKind.Truncated:
                {
                    Real(frame, 2, FrameFlags.CoordinateRouted, 64, _neighbour, _target, RandomPayload(14));
                    return r.Next(FrameLayout.EthernetHeaderSize, FrameLayout.HeaderSize);
                }
            case FuzzKind.TruncatedKey:
                {
                    Real(frame, 3, FrameFlags.KeyRouted, 64, _neighbour, _target, RandomPayload(40));
                    return r.Next(FrameLayout.HeaderSize, FrameLayout.HeaderSize + FrameLayout.KeySize);
                }
            case FuzzKind.WrongVersion:
                {
                    int length = AnyRealFrame(frame);
                    frame[OffsetVersion] = (byte)r.Next(2, 256);
                    return length;
                }
            case FuzzKind.BadFlags:
                {
                    int length = AnyRealFrame(frame);
                    frame[OffsetFlags] |= 8; // bit 3, the one bit no frame may set
                    return length;
                }
            case FuzzKind.BadLength:
                {
                    int length = AnyRealFrame(frame);
                    int offset = (frame[OffsetFlags] & (byte)FrameFlags.KeyRouted) != 0 ? FrameLayout.HeaderSize + FrameLayout.KeySize : FrameLayout.HeaderSize;
                    BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(OffsetPayloadLength), (ushort)r.Next(length - offset + 1, 65536));
                    return length;
                }
            case FuzzKind.BadCoordinate:
                {
                    int length = AnyRealFrame(frame);
                    int axis = r.Next(6);
                    int dimension = _torus.Size(axis % 3);
                    frame[OffsetSource + axis] = (byte)r.Next(dimension, 256);
                    return length;
                }
            case FuzzKind.UnknownService:
                {
                    // Any id above the product's last service (the flood probe's 250 runs only in the link benchmark).
                    byte service = (byte)r.Next(WellKnownServices.ReReplication + 1, 256);
                    return Real(frame, service, FrameFlags.None, 1, _neighbour, _target, RandomPayload(r.Next(0, 200)));
                }
            case FuzzKind.Oversize:
                {
                    int length = Real(frame, 3, FrameFlags.KeyRouted, 64, _neighbour, _target, RandomPayload(FrameLayout.MaxPayload - FrameLayout.KeySize));
                    int over = r.Next(FrameLayout.MaxFrameSize + 1, FrameLayout.MaxFrameSize + 5);
                    r.NextBytes(frame.AsSpan(length, over - length));
                    return over;
                }
            case FuzzKind.TtlExpired:
                // A ping request passing through: its TTL is spent on the way here.
                return Real(frame, 2, FrameFlags.CoordinateRouted, (byte)r.Next(0, 2), _neighbour, _far, PingPayload(kind: 1));
            case FuzzKind.BadBeacon:
                {
                    var payload = RandomPayload(r.Next(0, 2) == 0 ? r.Next(0, 8) : 8);
                    if (payload.Length >= 4 && BinaryPrimitives.ReadUInt32BigEndian(payload) == 0xCA3D_00B1)
                    {
                        payload[0] ^= 0xFF;
                    }
                    return Real(frame, 0, FrameFlags.None, 1, _neighbour, _target, payload);
                }
            case FuzzKind.BadLinkState:
                {
                    // Kind 1 with more entries than the payload holds, or another kind.
                    var payload = RandomPayload(r.Next(3, 200));
                    if (r.Next(2) == 0)
                    {
                        payload[0] = 1;
                        BinaryPrimitives.WriteUInt16BigEndian(payload.AsSpan(1), (ushort)r.Next(((payload.Length - 3) / 16) + 1, 65536));
                    }
                    else
                    {
                        payload[0] = (byte)r.Next(2, 256);
                    }
                    return Real(frame, 1, FrameFlags.None, 1, _neighbour, _target, payload);
                }
            case FuzzKind.BadPing:
                return Real(frame, 2, FrameFlags.CoordinateRouted, 64, _neighbour, _target, r.Next(3) switch
                {
                    0 => RandomPayload(r.Next(0, 14)),
                    1 => PingPayload(kind: (byte)r.Next(3, 256)),
                    _ => PingPayload(kind: 2), // a reply to a ping this server never sent
                });
            case FuzzKind.ShuffleTruncated:
                return Shuffle(frame, RandomPayload(r.Next(0, 16)));
            case FuzzKind.ShuffleWrongVersion:
                {
                    var payload = ShufflePayload(kind: (byte)r.Next(1, 4), entries: 1, entrySize: 24);
                    payload[1] = (byte)r.Next(2, 256);
                    return Shuffle(frame, payload);
                }
            case FuzzKind.ShuffleUnknownKind:
                return Shuffle(frame, ShufflePayload(kind: r.Next(2) == 0 ? (byte)0 : (byte)r.Next(4, 256), entries: 1, entrySize: 24));
            case FuzzKind.ShuffleBadCount:
                {
                    // An ack frame whose count does not match its entries (acks must fill the payload exactly).
                    var payload = ShufflePayload(kind: 2, entries: r.Next(1, 4), entrySize: 24);
                    BinaryPrimitives.WriteUInt16BigEndian(payload.AsSpan(2), (ushort)(r.Next(2) == 0 ? 0 : r.Next(4, 65536)));
                    return Shuffle(frame, payload);
                }
            case FuzzKind.ShuffleUnknownJob:
                return Shuffle(frame, r.Next(2) == 0
                    ? ShufflePayload(kind: 2, entries: r.Next(1, 4), entrySize: 24)
                    : ShufflePayload(kind: 1, entries: 1, entrySize: 20 + r.Next(0, 100)));
            case FuzzKind.BadChunkMessage:
                {
                    // An unknown kind, a cut header, or a fixed-size message of the wrong size.
                    byte[] payload = r.Next(3) switch
                    {
                        0 => RandomPayload(r.Next(0, 9)),
                        1 => WithKind(RandomPayload(r.Next(9, 100)), r.Next(2) == 0 ? (byte)0 : (byte)r.Next((int)Camdoop.ChunkStore.ChunkMessage.DecommissionReply + 1, 256)),
                        _ => WrongSize(),
                    };
                    return Real(frame, 4, FrameFlags.CoordinateRouted, 64, _neighbour, _target, payload);

                    byte[] WrongSize()
                    {
                        (byte kind, int size) = r.Next(5) switch
                        {
                            0 => ((byte)2, 14), // OfferReply
                            1 => ((byte)4, 21), // Ack
                            2 => ((byte)5, 10), // Done
                            3 => ((byte)6, 29), // ReadRequest
                            _ => ((byte)8, 11), // ListRequest
                        };
                        int wrong;
                        do
                        {
                            wrong = r.Next(9, 64);
                        }
                        while (wrong == size);
                        return WithKind(RandomPayload(wrong), kind);
                    }
                }
            case FuzzKind.StrayChunkReply:
                {
                    // A well-formed reply to a transfer this server never started.
                    byte[] payload = r.Next(3) switch
                    {
                        0 => new byte[14],
                        1 => new byte[21],
                        _ => new byte[10],
                    };
                    payload[0] = payload.Length switch { 14 => 2, 21 => 4, _ => 5 };
                    r.NextBytes(payload.AsSpan(1, 8));
                    return Real(frame, 4, FrameFlags.CoordinateRouted, 64, _neighbour, _target, payload);
                }
            case FuzzKind.BadJobControl:
                {
                    byte[] payload = r.Next(2) == 0
                        ? RandomPayload(r.Next(0, 9))
                        : WithKind(RandomPayload(r.Next(9, 100)), r.Next(2) == 0 ? (byte)0 : (byte)r.Next((int)JobMessage.QueryReply + 1, 256));
                    return Real(frame, 5, FrameFlags.CoordinateRouted, 64, _neighbour, _target, payload);
                }
            default:
                {
                    int length = r.Next(FrameLayout.EthernetHeaderSize, FrameLayout.MaxFrameSize + 1);
                    r.NextBytes(frame.AsSpan(0, length));
                    // Other EtherTypes never reach the node: its socket is bound to the CamCube one.
                    BinaryPrimitives.WriteUInt16BigEndian(frame.AsSpan(OffsetEtherType), FrameLayout.EtherType);
                    return length;
                }
        }
    }

    /// <summary>A valid frame of a random service to the target (what the header mutations start from).</summary>
    private int AnyRealFrame(byte[] frame) => _random.Next(4) switch
    {
        0 => Real(frame, 0, FrameFlags.None, 1, _neighbour, _target, RandomPayload(8)),
        1 => Real(frame, 2, FrameFlags.CoordinateRouted, 64, _neighbour, _target, PingPayload(kind: 1)),
        2 => Shuffle(frame, ShufflePayload(kind: 1, entries: 1, entrySize: 20 + _random.Next(0, 2000))),
        _ => Real(frame, 4, FrameFlags.CoordinateRouted, 64, _neighbour, _target, RandomPayload(_random.Next(9, 500))),
    };

    private int Shuffle(byte[] frame, byte[] payload) =>
        Real(frame, 3, FrameFlags.KeyRouted, 64, _neighbour, _target, payload, _targetKey);

    private static int Real(byte[] frame, byte service, FrameFlags flags, byte ttl, Coordinate source, Coordinate destination, byte[] payload, byte[]? key = null)
    {
        var header = new FrameHeader(service, source, destination, flags, ttl);
        return FrameCodec.Write(frame, ref header, key ?? (flags.HasFlag(FrameFlags.KeyRouted) ? new byte[FrameLayout.KeySize] : default), payload);
    }

    private byte[] RandomPayload(int length)
    {
        var payload = new byte[length];
        _random.NextBytes(payload);
        return payload;
    }

    private static byte[] WithKind(byte[] payload, byte kind)
    {
        payload[0] = kind;
        return payload;
    }

    private byte[] PingPayload(byte kind)
    {
        var payload = RandomPayload(14);
        payload[0] = kind;
        payload[13] = 0;
        return payload;
    }

    /// <summary>A shuffle frame header (kind, version 1, count, reserved 0, a random job id) and random entries.</summary>
    private byte[] ShufflePayload(byte kind, int entries, int entrySize)
    {
        var payload = RandomPayload(16 + (entries * entrySize));
        payload[0] = kind;
        payload[1] = 1;
        BinaryPrimitives.WriteUInt16BigEndian(payload.AsSpan(2), (ushort)entries);
        BinaryPrimitives.WriteUInt32BigEndian(payload.AsSpan(4), 0);
        return payload;
    }
}

using BenchmarkDotNet.Attributes;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Benchmarks.Runtime;

/// <summary>
/// The per-frame header path of a 9 KB jumbo frame: write the Ethernet and CamCube headers, pad/finish, then
/// validate and read the header back (the payload itself is written in place by the service and not copied here).
/// Target: at most 50 ns and no allocation.
/// </summary>
[MemoryDiagnoser]
public class FrameCodecBenchmark
{
    private readonly byte[] _buffer = new byte[FrameLayout.BufferSize];
    private readonly byte[] _key = new byte[FrameLayout.KeySize];
    private readonly Torus _torus = new(8, 8, 8);

    [Params(false, true)]
    public bool KeyRouted { get; set; }

    [Benchmark]
    public int EncodeAndDecodeHeader()
    {
        var header = new FrameHeader(3, new Coordinate(1, 2, 3), new Coordinate(7, 0, 5), KeyRouted ? FrameFlags.KeyRouted : FrameFlags.None);
        int payloadLength = KeyRouted ? FrameLayout.MaxKeyedPayload : FrameLayout.MaxPayload;
        int offset = FrameCodec.WriteHeader(_buffer, ref header, KeyRouted ? _key : default, payloadLength);
        int length = FrameCodec.Finish(_buffer, offset + payloadLength);
        var error = FrameCodec.TryRead(_buffer.AsSpan(0, length), _torus, out var read);
        return (int)error + read.PayloadLength + length;
    }
}

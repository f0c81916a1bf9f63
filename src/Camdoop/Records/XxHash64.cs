using System.Runtime.CompilerServices;
using SystemXxHash64 = System.IO.Hashing.XxHash64;

namespace Camdoop.Records;

/// <summary>
/// xxHash64 (XXH64): the checksum of chunks, run files, run-file indexes and reduce outputs, on disk and on the wire.
/// One-shot <see cref="Hash"/> and an incremental instance over <see cref="SystemXxHash64"/>, whose digest is read
/// as the 64-bit integer XXH64 defines (its byte-array forms are that integer big-endian) and whose signed seed
/// carries the same 64 bits; stored checksums are that integer.
/// </summary>
public sealed class XxHash64
{
    private readonly SystemXxHash64 _state;

    public XxHash64(ulong seed = 0) => _state = new SystemXxHash64(unchecked((long)seed));

    /// <summary>Starts again from the seed given to the constructor.</summary>
    public void Reset() => _state.Reset();

    public void Append(ReadOnlySpan<byte> data) => _state.Append(data);

    public ulong GetDigest() => _state.GetCurrentHashAsUInt64();

    /// <summary>One-shot hash of <paramref name="data"/>.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Hash(ReadOnlySpan<byte> data, ulong seed = 0) => SystemXxHash64.HashToUInt64(data, unchecked((long)seed));
}

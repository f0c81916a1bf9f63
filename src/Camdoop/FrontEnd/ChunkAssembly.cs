namespace Camdoop.FrontEnd;

/// <summary>
/// One uploaded chunk as its parts arrive, in order. Its buffer grows with the bytes received (doubling, up to the
/// declared length), never from the declared length alone: a client that declares a 240 MiB chunk and sends one
/// part holds what it sent, not 240 MiB.
/// </summary>
public sealed class ChunkAssembly
{
    private const int FirstBufferBytes = 64 * 1024;

    private byte[] _buffer = [];

    public ChunkAssembly(int index, long length)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(length, Array.MaxLength);
        Index = index;
        Length = length;
    }

    public int Index { get; }

    /// <summary>The chunk's declared length.</summary>
    public long Length { get; }

    public long Received { get; private set; }

    /// <summary>Bytes the buffer holds now (what the connection's limit and the front-end's memory budget count).</summary>
    public long Capacity => _buffer.Length;

    public bool IsComplete => Received == Length;

    /// <summary>Whether a part of <paramref name="partLength"/> bytes at <paramref name="offset"/> continues what arrived, within the length.</summary>
    public bool Continues(long offset, int partLength) => offset == Received && partLength <= Length - offset;

    /// <summary>
    /// Bytes the buffer grows by to take a part of <paramref name="partLength"/> bytes next (0 when it has room): what
    /// the front-end's memory budget must grant before <see cref="TryAppend"/>.
    /// </summary>
    public long GrowthFor(int partLength) => CapacityFor(Received + partLength) - _buffer.Length;

    /// <summary>Appends the part at <paramref name="offset"/>; false when it does not continue what arrived or overruns the length.</summary>
    public bool TryAppend(long offset, ReadOnlySpan<byte> part)
    {
        if (!Continues(offset, part.Length))
        {
            return false;
        }
        long needed = Received + part.Length;
        long capacity = CapacityFor(needed);
        if (capacity > _buffer.Length)
        {
            Array.Resize(ref _buffer, (int)capacity);
        }
        part.CopyTo(_buffer.AsSpan((int)Received));
        Received = needed;
        return true;
    }

    /// <summary>The chunk's bytes, exactly <see cref="Length"/> of them, once it is complete.</summary>
    public byte[] Bytes => IsComplete
        ? _buffer
        : throw new InvalidOperationException($"chunk {Index} has {Received} of {Length} bytes");

    /// <summary>The buffer's size once it holds <paramref name="needed"/> bytes: doubled, at least 64 KiB, at most the length.</summary>
    private long CapacityFor(long needed) =>
        needed <= _buffer.Length ? _buffer.Length : Math.Min(Length, Math.Max(needed, Math.Max(FirstBufferBytes, 2L * _buffer.Length)));
}

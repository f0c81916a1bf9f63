using System.Diagnostics;
using Camdoop.MapReduce.Buffers;

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// Where the input buffers of one <see cref="StreamMerger"/> come from and go back to (its
/// <see cref="ShuffleBufferPool"/>, or the GC without one), and counts of what making room in them cost.
/// <para>
/// Invariant: while <see cref="Draining"/>, no input gets another buffer, because Drain's steps hold positions of
/// consumed records (their keys, not yet copied) in the current ones. An input whose wrap needs another buffer then
/// (a cut record too long to join in place) asks <see cref="TryDeferUnwrap"/>, which notes it in
/// <see cref="UnwrapDeferred"/> for the merger to end once Drain has saved those keys.
/// </para>
/// </summary>
internal sealed class InputBufferSupply(ShuffleBufferPool? pool)
{
    /// <summary>Whether buffers come from a pool (only then can an input adopt a caller's buffer, or be trimmed).</summary>
    public bool HasPool => pool is not null;

    /// <summary>Set by Drain while its steps hold positions in input buffers.</summary>
    public bool Draining { get; set; }

    /// <summary>An input's unwrap was put off during Drain; the merger clears this when it has ended them.</summary>
    public bool UnwrapDeferred { get; set; }

    /// <summary>Bytes moved inside or between input buffers to make room (compaction, growth, ending a long wrap).</summary>
    public long MovedBytes { get; private set; }

    /// <summary>Times an input wrapped around its buffer instead of moving its bytes.</summary>
    public long Wraps { get; private set; }

    /// <summary>Wraps whose cut record was too long to join in place, ended after a Drain.</summary>
    public long DeferredUnwraps { get; private set; }

    /// <summary>An input's first buffer (zeroed when there is no pool).</summary>
    public byte[] RentFirst(int length) => pool?.Rent(length) ?? new byte[length];

    /// <summary>A buffer of at least <paramref name="length"/> bytes for an input to move its bytes into.</summary>
    public byte[] Rent(int length)
    {
        Debug.Assert(!Draining, "no input gets another buffer during Drain");
        return pool?.Rent(length) ?? GC.AllocateUninitializedArray<byte>(length);
    }

    /// <summary>Takes back an input's own buffer (into the pool, if any).</summary>
    public void Return(byte[] buffer) => pool?.Return(buffer);

    /// <summary>While draining, notes an unwrap put off and returns true; otherwise false (unwrap now).</summary>
    public bool TryDeferUnwrap()
    {
        if (!Draining)
        {
            return false;
        }
        UnwrapDeferred = true;
        DeferredUnwraps++;
        return true;
    }

    public void NoteMoved(int bytes) => MovedBytes += bytes;

    public void NoteWrap() => Wraps++;
}

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// The key of the last record or group a <see cref="StreamMerger"/> emitted: every key up to it has been fully
/// emitted, which is what recovery needs. A mutable struct, held in a field of the merger and used in place.
/// <para>
/// Invariants: while noted by position (<see cref="Note"/>: an input and the start of a whole record in that input's
/// buffer, which stays in place during Drain) the key is that record's, and any copy is older; <see cref="Save"/>
/// copies it before the input's bytes may move (at the end of each Drain). Noting costs two integer stores and no GC
/// write barrier, so the merge notes freely.
/// </para>
/// </summary>
internal struct EmittedKey
{
    private byte[] _copy;
    private int _copyLength;
    private bool _hasCopy;
    private int _input; // -1: not noted by position
    private int _recordStart;

    public EmittedKey()
    {
        _copy = new byte[64];
        _input = -1;
    }

    /// <summary>Whether any key has been emitted since the last <see cref="Clear"/>.</summary>
    public readonly bool HasKey => _hasCopy || _input >= 0;

    /// <summary>The key (empty if none), reading a key noted by position in <paramref name="inputs"/>.</summary>
    public readonly ReadOnlySpan<byte> Get(MergeInput[] inputs) =>
        _input >= 0 ? MergeInput.KeyAt(inputs[_input].Data, _recordStart)
        : _hasCopy ? _copy.AsSpan(0, _copyLength) : default;

    /// <summary>The record at <paramref name="recordStart"/> of input <paramref name="input"/> was the last emitted.</summary>
    public void Note(int input, int recordStart)
    {
        _input = input;
        _recordStart = recordStart;
    }

    /// <summary>The last emitted key is <paramref name="key"/> (copied).</summary>
    public void Set(ReadOnlySpan<byte> key)
    {
        if (_copy.Length < key.Length)
        {
            Array.Resize(ref _copy, Math.Max(_copy.Length * 2, key.Length));
        }
        key.CopyTo(_copy);
        _copyLength = key.Length;
        _hasCopy = true;
        _input = -1;
    }

    /// <summary>Copies a key noted by position, before the bytes of <paramref name="inputs"/> may move.</summary>
    public void Save(MergeInput[] inputs)
    {
        if (_input >= 0)
        {
            Set(MergeInput.KeyAt(inputs[_input].Data, _recordStart));
        }
    }

    /// <summary>No key emitted yet.</summary>
    public void Clear()
    {
        _hasCopy = false;
        _input = -1;
    }
}

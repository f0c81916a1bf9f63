namespace Camdoop.Records;

/// <summary>Where the key and value of one encoded record lie, relative to the record's first byte.</summary>
public readonly record struct RecordBounds(int KeyOffset, int KeyLength, int ValueLength)
{
    public int ValueOffset => KeyOffset + KeyLength;

    /// <summary>Encoded length of the whole record (header, key and value).</summary>
    public int Length => KeyOffset + KeyLength + ValueLength;
}

namespace Camdoop.Records;

/// <summary>
/// Size limits of one intermediate record. Maps, combiners and reducers that produce larger keys or values fail
/// with <see cref="RecordTooLargeException"/>; a record stream announcing larger lengths is corrupt.
/// </summary>
public static class RecordLimits
{
    /// <summary>Largest key, in bytes (64 KiB).</summary>
    public const int MaxKeyBytes = 64 * 1024;

    /// <summary>Largest value, in bytes (1 MiB).</summary>
    public const int MaxValueBytes = 1024 * 1024;

    /// <summary>Largest record header: two varints of at most 3 bytes each (both limits are below 2^21).</summary>
    public const int MaxHeaderBytes = 6;

    /// <summary>Largest encoded record.</summary>
    public const int MaxRecordBytes = MaxHeaderBytes + MaxKeyBytes + MaxValueBytes;

    /// <summary>Throws <see cref="RecordTooLargeException"/> when a key or value exceeds its limit.</summary>
    public static void Check(int keyLength, int valueLength, string producer)
    {
        if ((uint)keyLength > MaxKeyBytes || (uint)valueLength > MaxValueBytes)
        {
            throw new RecordTooLargeException(producer, keyLength, valueLength);
        }
    }
}

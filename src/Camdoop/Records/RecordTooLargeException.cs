namespace Camdoop.Records;

/// <summary>A job produced a key or value over <see cref="RecordLimits"/>. The task fails with this message.</summary>
public sealed class RecordTooLargeException : Exception
{
    public RecordTooLargeException(string producer, int keyLength, int valueLength)
        : base($"{producer} produced a record with a {keyLength}-byte key and a {valueLength}-byte value; "
             + $"the limits are {RecordLimits.MaxKeyBytes} bytes per key and {RecordLimits.MaxValueBytes} bytes per value")
    {
        Producer = producer;
        KeyLength = keyLength;
        ValueLength = valueLength;
    }

    public RecordTooLargeException(string message) : base(message)
    {
        Producer = "";
    }

    public RecordTooLargeException() : this("record too large")
    {
    }

    public RecordTooLargeException(string message, Exception innerException) : base(message, innerException)
    {
        Producer = "";
    }

    public string Producer { get; }

    public int KeyLength { get; }

    public int ValueLength { get; }
}

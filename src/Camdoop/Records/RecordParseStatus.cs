namespace Camdoop.Records;

/// <summary>Outcome of parsing one record at the start of a byte span.</summary>
public enum RecordParseStatus
{
    /// <summary>A whole record is present.</summary>
    Complete,

    /// <summary>The bytes so far are a valid prefix of a record; more are needed.</summary>
    Incomplete,

    /// <summary>The header announces lengths over <see cref="RecordLimits"/> or a varint is too long.</summary>
    Malformed,
}

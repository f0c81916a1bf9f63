namespace Camdoop.MapReduce.Jobs;

/// <summary>What a map function writes to: records, plus a counter for input records it had to drop as malformed.</summary>
public interface IMapEmitter : IRecordEmitter
{
    void CountMalformedRecord();
}

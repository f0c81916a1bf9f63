namespace Camdoop.MapReduce.Jobs;

/// <summary>Receives the (key, value) records produced by a map or reduce function. The spans are copied.</summary>
public interface IRecordEmitter
{
    void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value);
}

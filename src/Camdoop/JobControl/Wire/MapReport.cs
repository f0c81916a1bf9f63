namespace Camdoop.JobControl.Wire;

/// <summary>A server's map phase as reported to the coordinator.</summary>
public sealed record MapReport(bool Ok, int MapTasks, long InputBytes, long InputRecords, long IntermediateBytes, long MapNanoseconds, string? Error)
{
    public void Write(ControlWire.Writer w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.Bool(Ok);
        w.U16(MapTasks);
        w.I64(InputBytes);
        w.I64(InputRecords);
        w.I64(IntermediateBytes);
        w.I64(MapNanoseconds);
        w.OptionalString(Error);
    }

    public static MapReport Read(ref ControlWire.Reader r) =>
        new(r.Bool(), r.U16(), r.I64(), r.I64(), r.I64(), r.I64(), r.OptionalString());
}

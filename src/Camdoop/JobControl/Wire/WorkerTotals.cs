namespace Camdoop.JobControl.Wire;

/// <summary>
/// What one server did for a job, in its progress reports and its acknowledgement of the job's end: bytes its vertices
/// delivered, bytes sent again to recover, lost servers' map tasks run again and vertices taken over there.
/// </summary>
public readonly record struct WorkerTotals(long Delivered, long Resent, int MapTasksRerun, int VerticesAdopted)
{
    public void Write(ControlWire.Writer w)
    {
        ArgumentNullException.ThrowIfNull(w);
        w.I64(Delivered);
        w.I64(Resent);
        w.U32((uint)MapTasksRerun);
        w.U32((uint)VerticesAdopted);
    }

    public static WorkerTotals Read(ref ControlWire.Reader r) => new(r.I64(), r.I64(), (int)r.U32(), (int)r.U32());
}

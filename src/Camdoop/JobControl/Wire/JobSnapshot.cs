using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl.Wire;

/// <summary>One reduce task's output as a job's status shows it.</summary>
public sealed record OutputLocation(int ReduceTask, Coordinate Server, string? Path, Key? Chunk, long Records, long Bytes);

/// <summary>
/// A job as its coordinator sees it at one moment, for any server's front-end: what it is, where it is, its sizes
/// and times, its outputs and its failures. Times are seconds since the job was submitted, and the Unix time of the
/// submission, so they read the same whichever server took the snapshot.
/// </summary>
public sealed record JobSnapshot
{
    public required ulong JobId { get; init; }

    public required string Job { get; init; }

    public required string Input { get; init; }

    public required int Reducers { get; init; }

    public required string Mode { get; init; }

    public required string Trees { get; init; }

    public required JobState State { get; init; }

    /// <summary>Every reduce task is done and the servers are being told (the state still says shuffling).</summary>
    public bool Finishing { get; init; }

    /// <summary>The server coordinating the job when the snapshot was taken.</summary>
    public required Coordinate Coordinator { get; init; }

    /// <summary>How many times the job started over on the servers left (TCP Camdoop after a lost server): 0 at first.</summary>
    public int Attempt { get; init; }

    public int Servers { get; init; }

    public int MapsDone { get; init; }

    public int MapTasks { get; init; }

    public long InputBytes { get; init; }

    public long IntermediateBytes { get; init; }

    public long ShuffleBytes { get; init; }

    public int ReducesDone { get; init; }

    public long SubmittedUnixMs { get; init; }

    public double JobSeconds { get; init; }

    public double MapSeconds { get; init; }

    public double ShuffleReduceSeconds { get; init; }

    public string? Failure { get; init; }

    public string? OutputDataset { get; init; }

    public IReadOnlyList<OutputLocation> Outputs { get; init; } = [];

    public IReadOnlyList<ServerLoss> Losses { get; init; } = [];

    public long ResentBytes { get; init; }

    public int MapTasksRerun { get; init; }

    public int VerticesAdopted { get; init; }

    public void Write(ControlWire.Writer w, Torus torus)
    {
        ArgumentNullException.ThrowIfNull(w);
        ArgumentNullException.ThrowIfNull(torus);
        w.U64(JobId);
        w.String(Job);
        w.String(Input);
        w.U32((uint)Reducers);
        w.String(Mode);
        w.String(Trees);
        w.U8((byte)State);
        w.Bool(Finishing);
        w.U32((uint)torus.IndexOf(Coordinator));
        w.U32((uint)Attempt);
        w.U32((uint)Servers);
        w.U32((uint)MapsDone);
        w.U32((uint)MapTasks);
        w.I64(InputBytes);
        w.I64(IntermediateBytes);
        w.I64(ShuffleBytes);
        w.U32((uint)ReducesDone);
        w.I64(SubmittedUnixMs);
        w.I64(BitConverter.DoubleToInt64Bits(JobSeconds));
        w.I64(BitConverter.DoubleToInt64Bits(MapSeconds));
        w.I64(BitConverter.DoubleToInt64Bits(ShuffleReduceSeconds));
        w.OptionalString(Failure);
        w.OptionalString(OutputDataset);
        w.U32((uint)Outputs.Count);
        foreach (var o in Outputs)
        {
            w.U32((uint)o.ReduceTask);
            w.U32((uint)torus.IndexOf(o.Server));
            w.OptionalString(o.Path);
            w.Bool(o.Chunk is not null);
            if (o.Chunk is { } chunk)
            {
                w.Key(chunk);
            }
            w.I64(o.Records);
            w.I64(o.Bytes);
        }
        w.U32((uint)Losses.Count);
        foreach (var l in Losses)
        {
            w.U32((uint)torus.IndexOf(l.Server));
            w.I64(l.DetectedUnixMs);
            w.String(l.During);
        }
        w.I64(ResentBytes);
        w.U32((uint)MapTasksRerun);
        w.U32((uint)VerticesAdopted);
    }

    /// <summary>Reads a snapshot; null when malformed.</summary>
    public static JobSnapshot? Read(ref ControlWire.Reader r, Torus torus)
    {
        ArgumentNullException.ThrowIfNull(torus);
        ulong jobId = r.U64();
        string job = r.String(), input = r.String();
        int reducers = (int)r.U32();
        string mode = r.String(), trees = r.String();
        byte state = r.U8();
        bool finishing = r.Bool();
        int coordinator = (int)r.U32();
        int attempt = (int)r.U32(), servers = (int)r.U32(), mapsDone = (int)r.U32(), mapTasks = (int)r.U32();
        long inputBytes = r.I64(), intermediate = r.I64(), shuffled = r.I64();
        int reducesDone = (int)r.U32();
        long submitted = r.I64();
        double jobSeconds = BitConverter.Int64BitsToDouble(r.Signed64());
        double mapSeconds = BitConverter.Int64BitsToDouble(r.Signed64());
        double shuffleSeconds = BitConverter.Int64BitsToDouble(r.Signed64());
        string? failure = r.OptionalString(), output = r.OptionalString();
        int outputs = r.Count(26);
        var locations = new List<OutputLocation>(outputs);
        for (int i = 0; i < outputs && r.Ok; i++)
        {
            int task = (int)r.U32(), server = (int)r.U32();
            string? path = r.OptionalString();
            Key? chunk = r.Bool() ? r.Key() : null;
            long records = r.I64(), bytes = r.I64();
            if ((uint)server >= (uint)torus.Count)
            {
                return null;
            }
            locations.Add(new OutputLocation(task, torus.CoordinateOf(server), path, chunk, records, bytes));
        }
        int losses = r.Count(14);
        var lost = new List<ServerLoss>(losses);
        for (int i = 0; i < losses && r.Ok; i++)
        {
            int server = (int)r.U32();
            long at = r.I64();
            string during = r.String();
            if ((uint)server >= (uint)torus.Count)
            {
                return null;
            }
            lost.Add(new ServerLoss(torus.CoordinateOf(server), at, during));
        }
        long resent = r.I64();
        int rerun = (int)r.U32(), adopted = (int)r.U32();
        if (!r.Ok || state > (byte)JobState.Killed || (uint)coordinator >= (uint)torus.Count)
        {
            return null;
        }
        return new JobSnapshot
        {
            JobId = jobId,
            Job = job,
            Input = input,
            Reducers = reducers,
            Mode = mode,
            Trees = trees,
            State = (JobState)state,
            Finishing = finishing,
            Coordinator = torus.CoordinateOf(coordinator),
            Attempt = attempt,
            Servers = servers,
            MapsDone = mapsDone,
            MapTasks = mapTasks,
            InputBytes = inputBytes,
            IntermediateBytes = intermediate,
            ShuffleBytes = shuffled,
            ReducesDone = reducesDone,
            SubmittedUnixMs = submitted,
            JobSeconds = jobSeconds,
            MapSeconds = mapSeconds,
            ShuffleReduceSeconds = shuffleSeconds,
            Failure = failure,
            OutputDataset = output,
            Outputs = locations,
            Losses = lost,
            ResentBytes = resent,
            MapTasksRerun = rerun,
            VerticesAdopted = adopted,
        };
    }
}

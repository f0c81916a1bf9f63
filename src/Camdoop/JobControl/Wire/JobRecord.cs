using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl.Wire;

/// <summary>
/// A job's control state, as its coordinator keeps it and copies it to the two servers that would own the job's
/// control key after it (the way the chunk store keeps a chunk's replicas), so that the next owner can take the job
/// over when the coordinator dies: what the job is (description, input, output, the map-task directory of the current
/// attempt), its phase, the servers it lost, and every reduce task done and where its output is. Copies merge:
/// reduce tasks and losses accumulate, the phase only moves forward, and a later attempt replaces an earlier one.
/// </summary>
public sealed class JobRecord
{
    private const byte FormatVersion = 1;
    private const byte UpdateReduceDone = 1;
    private const byte UpdateLoss = 2;

    public required ulong JobId { get; init; }

    /// <summary>0 for the job as submitted; a TCP Camdoop job that lost a server starts over as the next attempt.</summary>
    public required int Attempt { get; set; }

    /// <summary>The current attempt's description (its job id is the attempt's shuffle id).</summary>
    public required JobDescription Description { get; set; }

    public required string InputName { get; init; }

    public required int InputChunks { get; init; }

    public string? OutputDataset { get; init; }

    public long SubmittedUnixMs { get; init; }

    /// <summary>Host index to the chunk ids it maps in the current attempt: every server in the job, appliances with none.</summary>
    public required SortedDictionary<int, IReadOnlyList<Key>> Directory { get; set; }

    public JobState State { get; set; }

    /// <summary>Every reduce task is done; the servers are being told the job is over.</summary>
    public bool Finishing { get; set; }

    public string? Failure { get; set; }

    public long MapsDoneUnixMs { get; set; }

    public long ShuffleStartedUnixMs { get; set; }

    public long FinishedUnixMs { get; set; }

    public long InputBytes { get; set; }

    public long InputRecords { get; set; }

    public long IntermediateBytes { get; set; }

    public List<ServerLoss> Losses { get; init; } = [];

    /// <summary>Per reduce task: the server whose root wrote it and its report, once done.</summary>
    public required (Coordinate Server, ReduceReport Report)?[] Reduces { get; set; }

    /// <summary>How far the job has gone: a copy never moves back.</summary>
    public int Rank => State.IsOver() ? 3 : Finishing ? 2 : State == JobState.Shuffling ? 1 : 0;

    /// <summary>
    /// Merges <paramref name="other"/> (a newer or older copy of the same job) into this one; true when anything
    /// changed. A later attempt replaces the attempt's fields; within one attempt, reduce tasks and losses add up and
    /// the phase takes the furthest.
    /// </summary>
    public bool Merge(JobRecord other)
    {
        ArgumentNullException.ThrowIfNull(other);
        if (other.JobId != JobId || other.Attempt < Attempt)
        {
            return false;
        }
        bool changed = false;
        if (other.Attempt > Attempt)
        {
            Attempt = other.Attempt;
            Description = other.Description;
            Directory = other.Directory;
            Reduces = other.Reduces;
            changed = true;
        }
        if (other.Rank > Rank || (other.Rank == Rank && State != other.State && other.State.IsOver()))
        {
            State = other.State;
            Finishing = other.Finishing;
            Failure = other.Failure ?? Failure;
            FinishedUnixMs = other.FinishedUnixMs;
            changed = true;
        }
        if (other.ShuffleStartedUnixMs != 0 && ShuffleStartedUnixMs == 0)
        {
            ShuffleStartedUnixMs = other.ShuffleStartedUnixMs;
            MapsDoneUnixMs = other.MapsDoneUnixMs;
            InputBytes = other.InputBytes;
            InputRecords = other.InputRecords;
            IntermediateBytes = other.IntermediateBytes;
            changed = true;
        }
        foreach (var loss in other.Losses)
        {
            changed |= AddLoss(loss);
        }
        for (int r = 0; r < Math.Min(Reduces.Length, other.Reduces.Length); r++)
        {
            if (Reduces[r] is null && other.Reduces[r] is { } done)
            {
                Reduces[r] = done;
                changed = true;
            }
        }
        DropLostOutputs();
        return changed;
    }

    /// <summary>Records a lost server once; true when it was new.</summary>
    public bool AddLoss(ServerLoss loss)
    {
        ArgumentNullException.ThrowIfNull(loss);
        if (Losses.Any(l => l.Server == loss.Server))
        {
            return false;
        }
        Losses.Add(loss);
        DropLostOutputs();
        return true;
    }

    /// <summary>
    /// Forgets reduce outputs that were files on a server since lost: they went with it (a stored chunk has replicas,
    /// a discarded output was never kept), and the task's restart brings them again. Once the job is finishing its
    /// outputs are final and stay listed: a server lost then (often one only silent for a while, which still serves
    /// them when back) no longer turns a done job into one with an output missing. Every copy applies the same rule,
    /// and a finishing record brings every output with it, so copies agree whatever order they hear of the loss and
    /// the report in.
    /// </summary>
    private void DropLostOutputs()
    {
        if (Rank >= 2)
        {
            return;
        }
        for (int r = 0; r < Reduces.Length; r++)
        {
            if (Reduces[r] is { } done && !done.Report.OutlivesItsServer && Losses.Any(l => l.Server == done.Server))
            {
                Reduces[r] = null;
            }
        }
    }

    /// <summary>The job as a copy of its state shows it (no live progress: what the coordinator last copied here).</summary>
    public JobSnapshot Snapshot(Coordinate coordinator, int servers, long unixNowMs)
    {
        var d = Description;
        long end = State.IsOver() || Finishing ? FinishedUnixMs : unixNowMs;
        var done = Reduces.Where(x => x is not null).Select(x => x!.Value).ToList();
        int jobServers = Directory.Keys.Count(h => h < servers);
        return new JobSnapshot
        {
            JobId = JobId,
            Job = d.Job.ToString(),
            Input = InputName,
            Reducers = d.ReduceTasks,
            Mode = d.Mode.Name(),
            Trees = MapReduce.Trees.TreeFamilyNames.Name(d.Trees),
            State = State,
            Finishing = Finishing,
            Coordinator = coordinator,
            Attempt = Attempt,
            Servers = jobServers,
            MapsDone = ShuffleStartedUnixMs > 0 ? jobServers : 0,
            MapTasks = InputChunks,
            InputBytes = InputBytes,
            IntermediateBytes = IntermediateBytes,
            ReducesDone = done.Count,
            SubmittedUnixMs = SubmittedUnixMs,
            JobSeconds = (end - SubmittedUnixMs) / 1e3,
            MapSeconds = ((MapsDoneUnixMs > 0 ? MapsDoneUnixMs : end) - SubmittedUnixMs) / 1e3,
            ShuffleReduceSeconds = ShuffleStartedUnixMs > 0 ? (end - ShuffleStartedUnixMs) / 1e3 : 0,
            Failure = Failure,
            OutputDataset = OutputDataset,
            Outputs = [.. done.Select(x => new OutputLocation(x.Report.ReduceTask, x.Server, x.Report.OutputPath, x.Report.Chunk, x.Report.Records, x.Report.FileBytes))],
            Losses = [.. Losses],
        };
    }

    public byte[] Encode(Torus torus)
    {
        ArgumentNullException.ThrowIfNull(torus);
        var w = new ControlWire.Writer(1024);
        w.U8(FormatVersion);
        w.U64(JobId);
        w.U32((uint)Attempt);
        w.Bytes(JobDescriptionCodec.Encode(Description));
        w.String(InputName);
        w.U32((uint)InputChunks);
        w.OptionalString(OutputDataset);
        w.I64(SubmittedUnixMs);
        w.U32((uint)Directory.Count);
        foreach (var (server, chunks) in Directory)
        {
            w.U32((uint)server);
            w.U32((uint)chunks.Count);
            foreach (var chunk in chunks)
            {
                w.Key(chunk);
            }
        }
        WriteProgress(w, torus);
        return w.ToArray();
    }

    /// <summary>Decodes a record; null when the bytes are not one (malformed, or servers off <paramref name="hosts"/>).</summary>
    public static JobRecord? Decode(ReadOnlySpan<byte> bytes, Torus hosts)
    {
        ArgumentNullException.ThrowIfNull(hosts);
        var r = new ControlWire.Reader(bytes);
        if (r.U8() != FormatVersion)
        {
            return null;
        }
        ulong jobId = r.U64();
        int attempt = (int)r.U32();
        var encoded = r.Bytes();
        if (!r.Ok || !JobDescriptionCodec.TryDecode(encoded, out var description, out _))
        {
            return null;
        }
        string input = r.String();
        int chunks = (int)r.U32();
        string? output = r.OptionalString();
        long submitted = r.Signed64();
        int servers = r.Count(8);
        var directory = new SortedDictionary<int, IReadOnlyList<Key>>();
        for (int i = 0; i < servers && r.Ok; i++)
        {
            int server = (int)r.U32();
            int count = r.Count(Key.Size);
            var ids = new Key[count];
            for (int k = 0; k < count; k++)
            {
                ids[k] = r.Key();
            }
            if ((uint)server >= (uint)hosts.Count || !directory.TryAdd(server, ids))
            {
                return null;
            }
        }
        if (!r.Ok || attempt < 0 || chunks < 0)
        {
            return null;
        }
        var record = new JobRecord
        {
            JobId = jobId,
            Attempt = attempt,
            Description = description!,
            InputName = input,
            InputChunks = chunks,
            OutputDataset = output,
            SubmittedUnixMs = submitted,
            Directory = directory,
            Reduces = new (Coordinate, ReduceReport)?[description!.ReduceTasks],
        };
        return record.ReadProgress(ref r, hosts) && r.AtEnd ? record : null;
    }

    /// <summary>A <see cref="JobMessage.RecordUpdate"/> body: reduce task done by <paramref name="server"/>.</summary>
    public static byte[] EncodeReduceDone(Torus torus, int attempt, Coordinate server, ReduceReport report)
    {
        ArgumentNullException.ThrowIfNull(torus);
        ArgumentNullException.ThrowIfNull(report);
        var w = new ControlWire.Writer(128);
        w.U8(UpdateReduceDone);
        w.U32((uint)attempt);
        w.U32((uint)torus.IndexOf(server));
        report.Write(w);
        return w.ToArray();
    }

    /// <summary>A <see cref="JobMessage.RecordUpdate"/> body: a server lost.</summary>
    public static byte[] EncodeLoss(Torus torus, int attempt, ServerLoss loss)
    {
        ArgumentNullException.ThrowIfNull(torus);
        ArgumentNullException.ThrowIfNull(loss);
        var w = new ControlWire.Writer(64);
        w.U8(UpdateLoss);
        w.U32((uint)attempt);
        w.U32((uint)torus.IndexOf(loss.Server));
        w.I64(loss.DetectedUnixMs);
        w.String(loss.During);
        return w.ToArray();
    }

    /// <summary>Applies a <see cref="JobMessage.RecordUpdate"/> body; false when it is malformed (an update of another attempt is ignored).</summary>
    public bool ApplyUpdate(ReadOnlySpan<byte> body, Torus torus)
    {
        ArgumentNullException.ThrowIfNull(torus);
        var r = new ControlWire.Reader(body);
        byte kind = r.U8();
        int attempt = (int)r.U32();
        int server = (int)r.U32();
        if (!r.Ok || (uint)server >= (uint)torus.Count)
        {
            return false;
        }
        if (kind == UpdateReduceDone)
        {
            var report = ReduceReport.Read(ref r);
            if (!r.Ok || !r.AtEnd || (uint)report.ReduceTask >= (uint)Reduces.Length)
            {
                return false;
            }
            if (attempt == Attempt)
            {
                Reduces[report.ReduceTask] ??= (torus.CoordinateOf(server), report);
                DropLostOutputs();
            }
            return true;
        }
        if (kind == UpdateLoss)
        {
            long at = r.I64();
            string during = r.String();
            if (!r.Ok || !r.AtEnd)
            {
                return false;
            }
            AddLoss(new ServerLoss(torus.CoordinateOf(server), at, during));
            return true;
        }
        return false;
    }

    private void WriteProgress(ControlWire.Writer w, Torus torus)
    {
        w.U8((byte)State);
        w.Bool(Finishing);
        w.OptionalString(Failure);
        w.I64(MapsDoneUnixMs);
        w.I64(ShuffleStartedUnixMs);
        w.I64(FinishedUnixMs);
        w.I64(InputBytes);
        w.I64(InputRecords);
        w.I64(IntermediateBytes);
        w.U32((uint)Losses.Count);
        foreach (var loss in Losses)
        {
            w.U32((uint)torus.IndexOf(loss.Server));
            w.I64(loss.DetectedUnixMs);
            w.String(loss.During);
        }
        var done = Reduces.Where(x => x is not null).Select(x => x!.Value).ToList();
        w.U32((uint)done.Count);
        foreach (var (server, report) in done)
        {
            w.U32((uint)torus.IndexOf(server));
            report.Write(w);
        }
    }

    private bool ReadProgress(ref ControlWire.Reader r, Torus torus)
    {
        byte state = r.U8();
        if (state > (byte)JobState.Killed)
        {
            return false;
        }
        State = (JobState)state;
        Finishing = r.Bool();
        Failure = r.OptionalString();
        MapsDoneUnixMs = r.I64();
        ShuffleStartedUnixMs = r.I64();
        FinishedUnixMs = r.I64();
        InputBytes = r.I64();
        InputRecords = r.I64();
        IntermediateBytes = r.I64();
        int losses = r.Count(14);
        for (int i = 0; i < losses && r.Ok; i++)
        {
            int server = (int)r.U32();
            long at = r.I64();
            string during = r.String();
            if ((uint)server >= (uint)torus.Count)
            {
                return false;
            }
            AddLoss(new ServerLoss(torus.CoordinateOf(server), at, during));
        }
        int done = r.Count(41);
        for (int i = 0; i < done && r.Ok; i++)
        {
            int server = (int)r.U32();
            var report = ReduceReport.Read(ref r);
            if ((uint)server >= (uint)torus.Count || (uint)report.ReduceTask >= (uint)Reduces.Length)
            {
                return false;
            }
            Reduces[report.ReduceTask] = (torus.CoordinateOf(server), report);
        }
        return r.Ok;
    }
}

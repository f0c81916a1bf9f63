using Camdoop.MapReduce.Trees;

namespace Camdoop.MapReduce.Jobs.Control;

/// <summary>
/// Everything every server needs to run its part of a job: identity, the user's job (built-in name or assembly
/// type, with options), the number of reduce tasks R, the shuffle mode, where input is and output goes, and the
/// per-server packet-buffer budget (0 = the service's default). Encoded compactly by <see cref="JobDescriptionCodec"/>
/// so the front-end can broadcast it over the torus.
/// </summary>
public sealed record JobDescription
{
    /// <summary>Largest number of reduce tasks a job may have (far above any torus we run).</summary>
    public const int MaxReduceTasks = 1 << 20;

    public required ulong JobId { get; init; }

    public required JobSpec Job { get; init; }

    public required int ReduceTasks { get; init; }

    public ShuffleMode Mode { get; init; } = ShuffleMode.Camdoop;

    public InputDescription Input { get; init; } = InputDescription.Default;

    public OutputTarget Output { get; init; } = OutputTarget.LocalFiles();

    /// <summary>The six disjoint trees the shuffle runs over (every server must use the same, so the job carries it).</summary>
    public TreeFamily Trees { get; init; } = TreeFamily.Shallow;

    /// <summary>
    /// Each root reducer streams its output, as it writes it, to the server its reduce task would start over on, so
    /// that after the root fails the task resumes after the last key that server holds instead of from the start.
    /// </summary>
    public bool ReplicateOutput { get; init; }

    /// <summary>Packet-buffer bytes per server for this job's inbound streams; 0 uses the service default.</summary>
    public long MemoryBudgetBytes { get; init; }

    /// <summary>
    /// The server index of each reduce task's root, in task order, when the submitter places them (concurrent jobs
    /// keep their roots apart, a job confined to some servers keeps its roots on them); null spreads them over the
    /// cube from a server the job id picks (JobPlacement).
    /// </summary>
    public IReadOnlyList<int>? Roots { get; init; }

    /// <summary>
    /// TCP Camdoop: streams each receiving end admits at once (Hadoop's parallel copies); 0 leaves it to the servers,
    /// which choose it from the switch buffer they assume. In the job so that every server uses the same.
    /// </summary>
    public int ParallelFetches { get; init; }

    /// <summary>TCP Camdoop: every sender pushes at once, unadmitted (the incast-prone baseline).</summary>
    public bool Push { get; init; }

    /// <summary>Throws <see cref="ArgumentException"/> naming the first bad field.</summary>
    public void Validate(int servers)
    {
        ArgumentNullException.ThrowIfNull(Job);
        ArgumentNullException.ThrowIfNull(Input);
        ArgumentNullException.ThrowIfNull(Output);
        if (ReduceTasks < 1 || ReduceTasks > MaxReduceTasks)
        {
            throw new ArgumentException($"job {JobId:x16}: R = {ReduceTasks} is out of range (1 .. {MaxReduceTasks})");
        }
        if (servers > 0 && ReduceTasks > servers)
        {
            throw new ArgumentException($"job {JobId:x16}: R = {ReduceTasks} exceeds the {servers} servers (at most one reduce task per server)");
        }
        if (!Enum.IsDefined(Mode))
        {
            throw new ArgumentException($"job {JobId:x16}: unknown shuffle mode {(int)Mode}");
        }
        if (!Enum.IsDefined(Trees))
        {
            throw new ArgumentException($"job {JobId:x16}: unknown tree family {(int)Trees}");
        }
        if (!Enum.IsDefined(Output.Kind))
        {
            throw new ArgumentException($"job {JobId:x16}: unknown output kind {(int)Output.Kind}");
        }
        if (Roots is not null)
        {
            ValidateRoots(servers);
        }
        if (ParallelFetches is < 0 or > ushort.MaxValue)
        {
            throw new ArgumentException($"job {JobId:x16}: {ParallelFetches} parallel fetches is out of range (0 .. {ushort.MaxValue})");
        }
        if (Push && ParallelFetches > 0)
        {
            throw new ArgumentException($"job {JobId:x16}: a job that pushes admits no senders, so it takes no parallel fetches");
        }
        if (MemoryBudgetBytes < 0)
        {
            throw new ArgumentException($"job {JobId:x16}: the memory budget cannot be negative");
        }
        if (Path.IsPathRooted(Input.RelativePath) || Input.RelativePath.Contains("..", StringComparison.Ordinal)
            || Path.IsPathRooted(Output.Directory) || Output.Directory.Contains("..", StringComparison.Ordinal))
        {
            throw new ArgumentException($"job {JobId:x16}: input and output paths must stay inside the data directory");
        }
    }

    private void ValidateRoots(int servers)
    {
        if (Roots!.Count != ReduceTasks)
        {
            throw new ArgumentException($"job {JobId:x16}: {Roots.Count} roots placed for R = {ReduceTasks}");
        }
        var seen = new HashSet<int>();
        foreach (int root in Roots)
        {
            if (root < 0 || (servers > 0 && root >= servers))
            {
                throw new ArgumentException($"job {JobId:x16}: root server {root} is outside the {servers} servers");
            }
            // The trees root one reduce task per server; TCP Camdoop may root several on one (a job that lost a server
            // and started over on fewer servers than it has reduce tasks).
            if (!seen.Add(root) && Mode != ShuffleMode.Tcp)
            {
                throw new ArgumentException($"job {JobId:x16}: two reduce tasks are rooted on server {root} (at most one per server)");
            }
        }
    }
}

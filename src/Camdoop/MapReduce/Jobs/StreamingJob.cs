using System.Text;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// A job whose functions are programs in any language, speaking Hadoop Streaming's protocol
/// (<see cref="StreamingLines"/>): the mapper reads a map task's input lines on its standard input and writes
/// <c>key TAB value</c> lines; the combiner, when there is one, reads the map task's output sorted by key and writes
/// lines that replace it before the shuffle; the reducer reads a reduce task's records sorted by key (the values of a
/// key in ascending byte order) and writes the output lines. Each runs as a child process
/// (<see cref="StreamingProcess"/>), once per map task or reduce task, where map work runs: the map phase runs the
/// mapper and the combiner inside the map task, and a reduce task's reducer runs once its root holds all of its
/// records.
/// <para>
/// Nothing is combined on the path: a program cannot be called from a vertex's event loop, which must never wait for
/// it, and a combiner may emit any keys in any order, where a vertex's output must stay one sorted stream it can resume
/// after its last key (the Camdoop paper, §4.2). So the job is not associative: vertices only merge, in either mode,
/// and the combiner's saving is made where the data starts. Inside the engine <see cref="Reduce"/> passes every
/// record on; the reducer program turns the reduce task's records into its output.
/// </para>
/// </summary>
public sealed class StreamingJob : IMapReduceJob
{
    /// <summary>The job's name in a job text: <c>streaming?mapper=M&amp;reducer=R[&amp;combiner=C]</c>.</summary>
    public const string JobName = "streaming";

    public const string MapperRole = "mapper";
    public const string CombinerRole = "combiner";
    public const string ReducerRole = "reducer";

    public StreamingJob(StreamingCommand mapper, StreamingCommand reducer, StreamingCommand? combiner = null)
    {
        ArgumentNullException.ThrowIfNull(mapper);
        ArgumentNullException.ThrowIfNull(reducer);
        Mapper = mapper;
        Reducer = reducer;
        Combiner = combiner;
    }

    public StreamingCommand Mapper { get; }

    public StreamingCommand Reducer { get; }

    public StreamingCommand? Combiner { get; }

    public string Name => JobName;

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => false;

    /// <summary>Not called: a map task feeds its whole input to the mapper program.</summary>
    public void Map(ReadOnlySpan<byte> record, IMapEmitter output) =>
        throw new NotSupportedException("a streaming job maps a map task's whole input through its mapper program, not record by record");

    /// <summary>Passes every record of the key on: the reducer program reads them afterwards.</summary>
    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output)
    {
        ArgumentNullException.ThrowIfNull(output);
        foreach (var value in values)
        {
            output.Emit(key, value);
        }
    }

    /// <summary>
    /// The job text of a streaming job (what `--mapper M --reducer R [--combiner C]` submit): its programs' names, or
    /// in a process that runs its user's own code, their paths. Throws <see cref="JobLoadException"/> for a name a job
    /// text cannot carry.
    /// </summary>
    public static JobSpec Spec(string mapper, string reducer, string? combiner = null)
    {
        var options = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            [MapperRole] = Checked(MapperRole, mapper),
            [ReducerRole] = Checked(ReducerRole, reducer),
        };
        if (combiner is not null)
        {
            options[CombinerRole] = Checked(CombinerRole, combiner);
        }
        return new JobSpec(JobName, options);
    }

    /// <summary>
    /// The job from its job text's options, each program's name resolved by <paramref name="resolve"/> (role, name);
    /// throws <see cref="JobLoadException"/> when a program is missing or an option unknown.
    /// </summary>
    public static StreamingJob FromOptions(IReadOnlyDictionary<string, string> options, Func<string, string, StreamingCommand> resolve)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(resolve);
        foreach (var name in options.Keys)
        {
            if (name is not (MapperRole or ReducerRole or CombinerRole))
            {
                throw new JobLoadException($"a streaming job takes the options mapper, reducer and combiner, not '{name}'");
            }
        }
        if (!options.TryGetValue(MapperRole, out var mapper) || !options.TryGetValue(ReducerRole, out var reducer))
        {
            throw new JobLoadException("a streaming job needs a mapper and a reducer (--mapper CMD --reducer CMD)");
        }
        return new StreamingJob(resolve(MapperRole, mapper), resolve(ReducerRole, reducer),
            options.TryGetValue(CombinerRole, out var combiner) ? resolve(CombinerRole, combiner) : null);
    }

    /// <summary>
    /// A program given by path, in a process that runs its own user's code (the simulator): it must be an executable
    /// file.
    /// </summary>
    public static StreamingCommand AtPath(string role, string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        var command = new StreamingCommand(role, System.IO.Path.GetFileName(path), System.IO.Path.GetFullPath(path));
        if (!File.Exists(command.Path))
        {
            throw new JobLoadException($"{command} is not in {System.IO.Path.GetDirectoryName(command.Path)}");
        }
        CheckExecutable(command);
        return command;
    }

    /// <summary>Refuses a program file nobody may execute.</summary>
    internal static void CheckExecutable(StreamingCommand command)
    {
        const UnixFileMode Execute = UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute;
        if (!OperatingSystem.IsWindows() && (File.GetUnixFileMode(command.Path) & Execute) == 0)
        {
            throw new JobLoadException($"{command} is not executable (chmod +x it; it runs with the interpreter its #! line names)");
        }
    }

    /// <summary>A program name a job text can carry: printable ASCII, no '&amp;' (which separates options).</summary>
    private static string Checked(string role, string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (name.Length == 0 || name.Contains('&', StringComparison.Ordinal) || !name.All(c => c is >= ' ' and <= '~'))
        {
            throw new JobLoadException(
                $"{role} '{Printable(name)}' cannot be named in a job: use printable ASCII without '&'");
        }
        return name;
    }

    private static string Printable(string text)
    {
        var printable = new StringBuilder();
        foreach (char c in text)
        {
            printable.Append(c is >= ' ' and <= '~' ? c : '?');
        }
        return printable.ToString();
    }
}

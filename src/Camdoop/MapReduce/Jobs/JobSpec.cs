using System.Globalization;
using System.Text;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// What identifies a job on every server: a built-in name ("wordcount") or a user job ("path/Jobs.dll#Ns.Type"),
/// plus string options. Text form: <c>target[?name=value[&amp;name=value...]]</c>, e.g. <c>topk?k=20</c>.
/// </summary>
public sealed record JobSpec(string Target, IReadOnlyDictionary<string, string> Options)
{
    public JobSpec(string target) : this(target, new Dictionary<string, string>())
    {
    }

    /// <summary>True when <see cref="Target"/> names a type in an assembly file ("path#TypeName").</summary>
    public bool IsUserJob => Target.Contains('#', StringComparison.Ordinal);

    /// <summary>True when the job's functions are programs (<see cref="StreamingJob"/>), named in its options.</summary>
    public bool IsStreamingJob => string.Equals(Target, StreamingJob.JobName, StringComparison.OrdinalIgnoreCase);

    public static JobSpec Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        int query = text.IndexOf('?', StringComparison.Ordinal);
        string target = (query < 0 ? text : text[..query]).Trim();
        if (target.Length == 0)
        {
            throw new JobLoadException($"job spec '{text}' names no job");
        }
        var options = new Dictionary<string, string>(StringComparer.Ordinal);
        if (query >= 0)
        {
            foreach (var pair in text[(query + 1)..].Split('&', StringSplitOptions.RemoveEmptyEntries))
            {
                int eq = pair.IndexOf('=', StringComparison.Ordinal);
                if (eq <= 0)
                {
                    throw new JobLoadException($"job spec '{text}': option '{pair}' is not name=value");
                }
                if (!options.TryAdd(pair[..eq], pair[(eq + 1)..]))
                {
                    throw new JobLoadException($"job spec '{text}': option '{pair[..eq]}' is given twice");
                }
            }
        }
        return new JobSpec(target, options);
    }

    public override string ToString()
    {
        if (Options.Count == 0)
        {
            return Target;
        }
        var text = new StringBuilder(Target).Append('?');
        text.AppendJoin('&', Options.OrderBy(o => o.Key, StringComparer.Ordinal)
            .Select(o => string.Create(CultureInfo.InvariantCulture, $"{o.Key}={o.Value}")));
        return text.ToString();
    }
}

using System.Globalization;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// Where a job's control lives. A job's control key is a hash of its id; the job's coordinator is the owner of that
/// key among the job's live servers, and the next two owners keep a copy of its control state, so every server can
/// tell who coordinates any job, and who takes over when the coordinator dies.
/// </summary>
public static class JobKeys
{
    /// <summary>The key whose owner coordinates job <paramref name="jobId"/>.</summary>
    public static Key ControlKey(ulong jobId) => Key.FromString(string.Create(CultureInfo.InvariantCulture, $"camdoop/job/{jobId:x16}"));

    /// <summary>
    /// A fresh job id whose control key <paramref name="self"/> owns while every server in <paramref name="view"/> is
    /// up, so that the front-end a job is submitted to coordinates it. <paramref name="next"/> draws candidate ids.
    /// </summary>
    public static ulong NewJobId(Torus servers, Coordinate self, ServerSet view, Func<ulong> next)
    {
        ArgumentNullException.ThrowIfNull(servers);
        ArgumentNullException.ThrowIfNull(view);
        ArgumentNullException.ThrowIfNull(next);
        var mapper = KeyMapper.Shared(servers);
        int me = servers.IndexOf(self);
        // A server owns 1/N of all keys while all are up, more when some are down: a few N draws find one.
        for (int i = 0; i < 64 * servers.Count; i++)
        {
            ulong id = next();
            if (id != 0 && mapper.OwnerIndex(ControlKey(id), view) == me)
            {
                return id;
            }
        }
        throw new InvalidOperationException($"no job id whose control key {self} owns was found");
    }

    /// <summary>The shuffle's job id of an attempt: the job's own for the first, a distinct one for each start over.</summary>
    public static ulong ShuffleId(ulong jobId, int attempt)
    {
        if (attempt == 0)
        {
            return jobId;
        }
        ulong h = (jobId ^ ((ulong)attempt * 0x9E3779B97F4A7C15UL)) * 0xBF58476D1CE4E5B9UL;
        return h == 0 ? 1 : h;
    }
}

using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

// fsck: every server is asked which replicas it holds and how their last check went; the chunk store sets them against
// the manifests and the placement (ChunkStoreService.Fsck); here the report becomes the reply.
public sealed partial class FrontEndSession
{
    private async Task FsckAsync(FsckRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string? name = request.Name is null ? null : Names.CheckDataset(request.Name);
        var result = await _node.Start<FsckResult>(done => _node.Store.Fsck(name, done)).ConfigureAwait(false);
        var report = result.Report ?? throw new FrontEndException(result.Error ?? "fsck failed");
        await replies.SendAsync(Reply(report), cancellation).ConfigureAwait(false);
    }

    /// <summary>The report as `camdoop fsck` receives it.</summary>
    public static FsckReply Reply(FsckReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        return new FsckReply
        {
            Chunks = report.Chunks,
            Replicas = report.Replicas,
            UnderReplicated = report.UnderReplicated,
            Missing = report.Missing,
            Corrupt = report.Corrupt,
            Required = report.Required,
            LiveServers = report.Answered.Count,
            Unanswered = [.. report.Unanswered.Select(c => c.Name)],
            Datasets = [.. report.Datasets.Select(d => new FsckDatasetInfo
            {
                Name = d.Name,
                Chunks = d.Chunks,
                Replicas = d.Replicas,
                UnderReplicated = d.UnderReplicated,
                Missing = d.Missing,
                Corrupt = d.Corrupt,
                ManifestReplicas = d.ManifestReplicas,
                Error = d.Error,
                ProblemCount = d.Problems.Count,
                Problems = [.. d.Problems.Take(FsckLimits.MaxProblems).Select(c => new FsckChunkInfo
                {
                    Chunk = c.Id.ToString(),
                    Index = c.Index,
                    Good = c.Good,
                    Replicas = [.. c.Replicas.Select(r => new FsckReplicaInfo { Server = r.Server.Name, State = StateName(r.State) })],
                    Placement = [.. c.Placement.Select(p => p.Name)],
                })],
            })],
        };
    }

    private static string StateName(ReplicaState state) => state switch
    {
        ReplicaState.Good => "good",
        ReplicaState.Corrupt => "corrupt",
        ReplicaState.Missing => "missing",
        _ => "unchecked",
    };
}

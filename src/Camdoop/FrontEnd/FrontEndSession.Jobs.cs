using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.MapReduce.FrontEnd;

// Jobs: submission, progress and output (added once the Camdoop service is in).
public sealed partial class FrontEndSession
{
    private static Task HandleJobsAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation) =>
        throw new FrontEndException($"unknown operation '{request.Op}'");
}

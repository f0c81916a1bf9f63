using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.MapReduce.FrontEnd;

public sealed partial class FrontEndSession
{
    private Task HandleMoreAsync(WireMessage request, FrontEndReplies replies, CancellationToken cancellation) =>
        throw new FrontEndException($"unknown operation '{request.Op}'");

    private static void DisposeUploads()
    {
    }
}

using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>
/// The lane re-replication's data frames travel in: a service of its own, so they wait in their own queue at every
/// port (and every relay) and `limit --service re-replication` caps them without touching the writes and reads of
/// the chunk store. It holds no state: frames and send-ready notices go to the chunk store, which runs the copies.
/// </summary>
public sealed class ReReplicationService(ChunkStoreService store) : IService
{
    public byte Id => WellKnownServices.ReReplication;

    public string Name => "re-replication";

    public void Start(INodeContext context)
    {
    }

    public void OnFrame(in InboundFrame frame) => store.OnFrame(frame);

    public void OnSendReady(Port port) => store.OnSendReady(port);
}

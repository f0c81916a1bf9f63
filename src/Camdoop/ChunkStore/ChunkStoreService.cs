using System.Globalization;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>
/// The chunk store (the Camdoop paper, §4): the distributed store of input datasets, on key routing. A chunk has a 160-bit id;
/// its three replicas live at the id's owner and at the two servers that take the id over when the owner fails
/// (<see cref="ChunkPlacement"/>). Chunk bytes move between servers over reliable windowed transfers
/// (<see cref="OutboundTransfer"/>, <see cref="InboundTransfer"/>) of coordinate-routed frames; a write completes
/// only when every live replica has checked and fsynced the bytes; a read verifies the replica's checksum, moves on
/// to another replica when it is corrupt or missing, and repairs the bad one from the good bytes. Dataset manifests
/// are chunks too (<see cref="ChunkKind.Manifest"/>), so <see cref="ListManifests"/> asks every server which it holds.
/// Single-threaded, event-driven, acting only through its node context: it runs in the simulator as on real links.
/// </summary>
public sealed partial class ChunkStoreService : IService
{
    private readonly Dictionary<(int Peer, ulong Id), OutboundTransfer> _outbound = [];
    private readonly HashSet<(int Peer, ulong Id)> _filesBeingHashed = [];
    private readonly Dictionary<(int Peer, ulong Id), InboundTransfer> _inbound = [];
    private readonly List<OutboundTransfer>[] _blocked = new List<OutboundTransfer>[Ports.Count];
    private readonly byte[] _frame = new byte[FrameLayout.MaxPayload];
    private INodeContext? _context;
    private readonly KeyRoutingService _routing;
    private LocalChunkStore? _store;
    private ReplicaWriteQueue? _writes;
    private ulong _idBase;
    private uint _nextId;
    private Action? _sweep;
    private bool _stopped;

    /// <param name="routing">The server's key routing: where replicas go, and the frames that carry them.</param>
    /// <param name="options">The store's settings; null: the defaults.</param>
    public ChunkStoreService(KeyRoutingService routing, ChunkStoreOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(routing);
        _routing = routing;
        Options = options ?? new ChunkStoreOptions();
        for (int p = 0; p < Ports.Count; p++)
        {
            _blocked[p] = [];
        }
    }

    /// <summary>Registers a chunk store on <paramref name="host"/> (after the key-routing service).</summary>
    public static ChunkStoreService Install(NodeHost host, ChunkStoreOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(host);
        var routing = host.GetService<KeyRoutingService>()
            ?? throw new InvalidOperationException("the chunk store needs the key-routing service registered first");
        var service = new ChunkStoreService(routing, options);
        host.Register(service, service.Options.QueueFrames);
        host.Register(new ReReplicationService(service), service.Options.QueueFrames);
        return service;
    }

    public byte Id => WellKnownServices.ChunkStore;

    public string Name => "chunk-store";

    public ChunkStoreOptions Options { get; }

    public ChunkStoreCounters Counters { get; } = new();

    /// <summary>The replicas on this server.</summary>
    public LocalChunkStore Local => _store ?? throw new InvalidOperationException("the chunk store has not started");

    internal INodeContext Context => _context ?? throw new InvalidOperationException("the chunk store has not started");

    internal long Now => Context.Now;

    public int ActiveOutbound => _outbound.Count;

    public int ActiveInbound => _inbound.Values.Count(t => !t.Finished);

    public void Start(INodeContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        _context = context;
        _store = new LocalChunkStore(context.DataDirectory);
        _store.Open();
        _writes = new ReplicaWriteQueue(context);
        LoadTombstones();
        LoadDecommissioned();
        // Transfer ids: this server's index, a boot counter kept on disk (ids never repeat across restarts, so a
        // peer's memory of an old transfer cannot be mistaken for a new one), and a counter.
        _idBase = ((ulong)(uint)context.Torus.IndexOf(context.Self) << 48) | ((ulong)(NextBoot() & 0xFFFF) << 32);
        if (_store.Count > 0)
        {
            context.Log(LogLevel.Info, $"chunk store: {_store.Count} replicas, {_store.BytesStored} bytes");
        }
        _sweep = Sweep;
        context.SetTimer(NodeOptions.Millisecond * 1000, _sweep);
        StartScrubbing();
    }

    public void Stop()
    {
        _stopped = true;
        foreach (var t in _outbound.Values.ToList())
        {
            t.Abandon($"server {Context.Self.Name} is stopping");
        }
        foreach (var t in _inbound.Values)
        {
            t.Abandon();
        }
        _inbound.Clear();
        foreach (var read in _reads.Values.ToList())
        {
            read.Fail("the server is stopping");
        }
        foreach (var list in _lists.Values.ToList())
        {
            list.Finish();
        }
        foreach (var delete in _deletes.Values.ToList())
        {
            delete.Finish();
        }
        foreach (var replicas in _replicaLists.Values.ToList())
        {
            replicas.Finish();
        }
        foreach (var decommission in _decommissions.Values.ToList())
        {
            decommission.Finish();
        }
    }

    /// <summary>The replica servers of <paramref name="chunk"/> in this server's current view, primary first.</summary>
    public IReadOnlyList<Coordinate> PlacementOf(in Key chunk) =>
        _decommissioned.Count == 0 ? ChunkPlacement.Targets(_routing, chunk) : ChunkPlacement.Targets(_routing.Mapper, chunk, PlacementView());

    public bool IsReachable(Coordinate server) => _routing.IsReachable(server);

    public void OnFrame(in InboundFrame frame)
    {
        var payload = frame.Payload;
        if (!ChunkWire.TryReadHeader(payload, out var kind, out ulong id))
        {
            Counters.Malformed++;
            return;
        }
        var peer = frame.Header.Source;
        int peerIndex = Context.Torus.IndexOf(peer);
        switch (kind)
        {
            case ChunkMessage.Offer:
                OnOffer(peer, peerIndex, id, payload);
                break;
            case ChunkMessage.OfferReply:
                if (!ChunkWire.TryReadOfferReply(payload, out var offerStatus, out int window))
                {
                    Counters.Malformed++;
                }
                else if (_outbound.TryGetValue((peerIndex, id), out var t))
                {
                    t.OnOfferReply(offerStatus, window);
                }
                else
                {
                    Counters.UnknownTransfers++; // a reply to no transfer of ours (late, or forged): dropped
                }
                break;
            case ChunkMessage.Data:
                OnData(peer, peerIndex, id, payload);
                break;
            case ChunkMessage.Ack:
                if (!ChunkWire.TryReadAck(payload, out long next, out int ackWindow))
                {
                    Counters.Malformed++;
                }
                else if (_outbound.TryGetValue((peerIndex, id), out var t))
                {
                    t.OnAck(next, ackWindow);
                }
                else
                {
                    Counters.UnknownTransfers++; // a reply to no transfer of ours (late, or forged): dropped
                }
                break;
            case ChunkMessage.Done:
                if (!ChunkWire.TryReadStatus(payload, (byte)DoneStatus.DiskFull, out byte done))
                {
                    Counters.Malformed++;
                }
                else if (_outbound.TryGetValue((peerIndex, id), out var t))
                {
                    t.OnDone((DoneStatus)done);
                }
                else
                {
                    Counters.UnknownTransfers++; // a reply to no transfer of ours (late, or forged): dropped
                }
                break;
            case ChunkMessage.ReadRequest:
                OnReadRequest(peer, peerIndex, id, payload);
                break;
            case ChunkMessage.ReadReply:
                OnReadReply(peerIndex, id, payload);
                break;
            case ChunkMessage.ListRequest:
                OnListRequest(peer, id, payload);
                break;
            case ChunkMessage.ListReply:
                OnListReply(peerIndex, id, payload);
                break;
            case ChunkMessage.FileRequest:
                OnFileRequest(peer, peerIndex, id, payload);
                break;
            case ChunkMessage.DeleteRequest:
                OnDeleteRequest(peer, peerIndex, id, payload);
                break;
            case ChunkMessage.DeleteReply:
                OnDeleteReply(peerIndex, id, payload);
                break;
            case ChunkMessage.Joined:
                if (payload.Length != ChunkWire.HeaderSize)
                {
                    Counters.Malformed++;
                }
                else
                {
                    OnJoined(peerIndex);
                }
                break;
            case ChunkMessage.ReplicaRequest:
                OnReplicaRequest(peer, id, payload);
                break;
            case ChunkMessage.ReplicaReply:
                OnReplicaReply(peerIndex, id, payload);
                break;
            case ChunkMessage.Tombstone:
                OnTombstone(peer, peerIndex, payload);
                break;
            case ChunkMessage.TombstoneApplied:
                OnTombstoneApplied(peerIndex, payload);
                break;
            case ChunkMessage.DecommissionRequest:
                OnDecommissionRequest(peer, id, payload);
                break;
            case ChunkMessage.DecommissionReply:
                OnDecommissionReply(peerIndex, id, payload);
                break;
        }
    }

    public void OnSendReady(Port port)
    {
        var waiting = _blocked[(int)port];
        if (waiting.Count == 0)
        {
            return;
        }
        var resume = waiting.ToArray();
        waiting.Clear();
        foreach (var t in resume)
        {
            t.Blocked = false;
            if (t.State != OutboundState.Finished)
            {
                t.Pump();
            }
        }
    }

    // ---------------------------------------------------------------- transfers

    private ulong NewId() => _idBase | ++_nextId;

    /// <summary>Starts sending a chunk to <paramref name="peer"/>; <paramref name="done"/> runs on the loop when it ends.</summary>
    private void StartOutbound(Coordinate peer, TransferPurpose purpose, ChunkMeta meta, IChunkSource source, Action<TransferOutcome> done, ulong? id = null,
        byte lane = WellKnownServices.ChunkStore)
    {
        var transfer = new OutboundTransfer(this, peer, id ?? NewId(), purpose, meta, source, done) { Lane = lane };
        _outbound[(Context.Torus.IndexOf(peer), transfer.Id)] = transfer;
        Counters.TransfersStarted++;
        transfer.Start();
    }

    internal void OnOutboundFinished(OutboundTransfer transfer, TransferOutcome outcome)
    {
        _outbound.Remove((Context.Torus.IndexOf(transfer.Peer), transfer.Id));
        if (transfer.Blocked)
        {
            foreach (var list in _blocked)
            {
                list.Remove(transfer);
            }
        }
        if (outcome.Ok)
        {
            Counters.TransfersSucceeded++;
        }
        else
        {
            Counters.TransfersFailed++;
            if (!_stopped)
            {
                Context.Log(LogLevel.Warning, $"chunk store: {transfer.Purpose.ToString().ToLowerInvariant()} of chunk {transfer.Meta.Id} to {transfer.Peer.Name} failed: {outcome.Error}");
            }
        }
    }

    internal void WaitForRoom(OutboundTransfer transfer, Port port)
    {
        if (!transfer.Blocked)
        {
            transfer.Blocked = true;
            _blocked[(int)port].Add(transfer);
        }
    }

    private void OnOffer(Coordinate peer, int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadOffer(payload, out var purpose, out var meta))
        {
            Counters.Malformed++;
            return;
        }
        if (_inbound.TryGetValue((peerIndex, id), out var existing))
        {
            existing.OnRepeatedOffer();
            return;
        }
        if (purpose == TransferPurpose.ReadResponse)
        {
            AcceptReadResponse(peer, peerIndex, id, meta!);
            return;
        }
        if (TombstoneOf(meta!) is { } tombstone)
        {
            // A replica of a removed dataset (a server back from away offers what it still holds): refused, and the
            // offerer is told why, so it drops its own.
            Counters.RemovedOffersRefused++;
            SendOfferReply(peer, id, OfferStatus.Removed);
            SendTombstone(tombstone, peer);
            return;
        }
        if (IsReceiving(meta!.Id))
        {
            // Two holders restoring the same replica at once: one copy is enough; the other asks again later.
            Counters.Busy++;
            SendOfferReply(peer, id, OfferStatus.Busy);
            return;
        }
        var store = Local;
        if (store.TryGet(meta!.Id, out var held) && held.Meta.Checksum == meta.Checksum && held.Meta.Length == meta.Length
            && (purpose == TransferPurpose.Store ? !held.Corrupt : store.Verify(meta.Id) == ReplicaHealth.Good))
        {
            SendOfferReply(peer, id, OfferStatus.AlreadyStored);
            return;
        }
        if (ActiveInbound >= Options.MaxTransfers)
        {
            Counters.Busy++;
            SendOfferReply(peer, id, OfferStatus.Busy);
            return;
        }
        FileChunkSink sink;
        try
        {
            // Creating the file and reserving its space are metadata operations, quick enough for the loop; the
            // flushes that wait for the disk happen off it, at the commit.
            sink = store.BeginWrite(meta);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            bool full = e is IOException io && StorageErrors.IsDiskFull(io);
            Context.Log(LogLevel.Error, $"chunk store: cannot create a replica file for chunk {meta.Id} ({meta.Length} bytes): {e.Message}");
            Counters.StorageErrors++;
            if (full)
            {
                Counters.DiskFull++;
            }
            SendOfferReply(peer, id, full ? OfferStatus.DiskFull : OfferStatus.Refused);
            return;
        }
        var transfer = new InboundTransfer(this, peer, id, purpose, meta, sink, null);
        _inbound[(peerIndex, id)] = transfer;
        Counters.InboundAccepted++;
        SendOfferReply(peer, id, OfferStatus.Accepted);
        transfer.Begin();
    }

    /// <summary>
    /// Makes a received and checked replica durable off the loop, then answers the sender: Stored only once the bytes,
    /// the metadata and the directory are on the disk.
    /// </summary>
    internal void CommitReplica(InboundTransfer transfer)
    {
        var sink = (FileChunkSink)transfer.Sink;
        var store = Local;
        Exception? error = null;
        _writes!.Run(
            transfer.Meta.Id,
            () =>
            {
                try
                {
                    store.CommitFiles(sink);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    error = e;
                }
            },
            () =>
            {
                if (error is not null)
                {
                    transfer.OnCommitted(Failed(transfer.Meta, error));
                    return;
                }
                store.Register(transfer.Meta);
                Counters.InboundCompleted++;
                Counters.ReplicasStored++;
                if (transfer.Purpose == TransferPurpose.Repair)
                {
                    Counters.RepairsCompleted++;
                    Context.Log(LogLevel.Info, $"chunk store: replica of chunk {transfer.Meta.Id} ({transfer.Meta.Dataset}) repaired from {transfer.Peer.Name}");
                }
                transfer.OnCommitted(DoneStatus.Stored);
            });
    }

    /// <summary>
    /// Stores a replica of <paramref name="bytes"/> on this server: written, flushed and renamed off the loop.
    /// <paramref name="done"/> runs on the loop with null once it is durable, else with the reason.
    /// </summary>
    public void StoreLocal(ChunkMeta meta, ReadOnlyMemory<byte> bytes, Action<string?> done)
    {
        ArgumentNullException.ThrowIfNull(meta);
        ArgumentNullException.ThrowIfNull(done);
        var store = Local;
        if (store.Holds(meta))
        {
            done(null);
            return;
        }
        Exception? error = null;
        _writes!.Run(
            meta.Id,
            () =>
            {
                try
                {
                    using var source = new MemoryChunkSource(bytes);
                    store.WriteFiles(meta, source);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    error = e;
                }
            },
            () =>
            {
                if (error is not null)
                {
                    done(Failed(meta, error) == DoneStatus.DiskFull
                        ? $"server {Context.Self.Name} has no room for chunk {meta.Id} ({meta.Length} bytes): its disk is full"
                        : $"server {Context.Self.Name} could not store chunk {meta.Id}: {error.Message}");
                    return;
                }
                store.Register(meta);
                Counters.ReplicasStored++;
                done(null);
            });
    }

    /// <summary>Logs and counts a replica write that failed; returns how to tell the sender.</summary>
    private DoneStatus Failed(ChunkMeta meta, Exception error)
    {
        bool full = error is IOException io && StorageErrors.IsDiskFull(io);
        if (full)
        {
            Counters.DiskFull++;
        }
        Counters.StorageErrors++;
        Context.Log(LogLevel.Error, $"chunk store: storing chunk {meta.Id} ({meta.Dataset}, {meta.Length} bytes) failed: {error.Message}");
        return full ? DoneStatus.DiskFull : DoneStatus.StorageError;
    }

    private void OnData(Coordinate peer, int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadData(payload, out long offset, out var bytes))
        {
            Counters.Malformed++;
            return;
        }
        Counters.DataFramesReceived++;
        if (_inbound.TryGetValue((peerIndex, id), out var transfer))
        {
            transfer.OnData(offset, bytes);
            return;
        }
        // A transfer we do not know (we restarted, or it was given up): tell the sender to start over.
        Counters.UnknownTransfers++;
        SendDone(peer, id, DoneStatus.UnknownTransfer);
    }

    /// <summary>Forgets finished inbound transfers after the linger time and gives up silent ones.</summary>
    private void Sweep()
    {
        long now = Now;
        List<(int, ulong)>? remove = null;
        foreach (var (key, t) in _inbound)
        {
            if (t.Committing)
            {
                continue; // waiting for the disk, not for the sender
            }
            if (t.Finished ? now - t.LastActivity > Options.Linger : now - t.LastActivity > Options.StallTimeout)
            {
                t.Abandon();
                (remove ??= []).Add(key);
            }
        }
        if (remove is not null)
        {
            foreach (var key in remove)
            {
                _inbound.Remove(key);
            }
        }
        KeepReplicas(now);
        SendTombstones(now);
        if (!_stopped)
        {
            Context.SetTimer(NodeOptions.Millisecond * 1000, _sweep!);
        }
    }

    // ---------------------------------------------------------------- sending frames

    internal SendStatus SendData(OutboundTransfer transfer, long offset, int length, out Port port)
    {
        int header = ChunkWire.WriteDataHeader(_frame, transfer.Id, offset);
        int n = transfer.Source.Read(offset, _frame.AsSpan(header, length));
        var status = _routing.RouteTo(transfer.Lane, transfer.Peer, _frame.AsSpan(0, header + n), out port);
        if (status == SendStatus.Queued)
        {
            Counters.DataFramesSent++;
            Counters.DataBytesSent += n;
        }
        return status;
    }

    internal void SendOffer(OutboundTransfer transfer)
    {
        int n = ChunkWire.WriteOffer(_frame, transfer.Id, transfer.Purpose, transfer.Meta);
        SendControl(transfer.Peer, n);
    }

    internal void SendOfferReply(Coordinate peer, ulong id, OfferStatus status) =>
        SendControl(peer, ChunkWire.WriteOfferReply(_frame, id, status, Options.ReceiveWindowBytes));

    internal void SendAck(Coordinate peer, ulong id, long next)
    {
        Counters.AcksSent++;
        SendControl(peer, ChunkWire.WriteAck(_frame, id, next, Options.ReceiveWindowBytes));
    }

    internal void SendDone(Coordinate peer, ulong id, DoneStatus status) =>
        SendControl(peer, ChunkWire.WriteStatus(_frame, ChunkMessage.Done, id, (byte)status));

    /// <summary>Control frames are not retried here: a lost one is recovered by the sender's timer.</summary>
    private void SendControl(Coordinate peer, int length)
    {
        if (_routing.RouteTo(Id, peer, _frame.AsSpan(0, length), out _) != SendStatus.Queued)
        {
            Counters.ControlDropped++;
        }
    }

    private uint NextBoot()
    {
        string path = Path.Combine(Local.Directory, "boot");
        uint boot = 0;
        try
        {
            if (File.Exists(path) && uint.TryParse(File.ReadAllText(path), NumberStyles.None, CultureInfo.InvariantCulture, out uint previous))
            {
                boot = previous + 1;
            }
            File.WriteAllText(path, boot.ToString(CultureInfo.InvariantCulture));
        }
        catch (IOException)
        {
            // A read-only or full disk: fall back to the clock, which differs between boots on a real server.
            boot = (uint)(Context.Now >> 20);
        }
        return boot;
    }
}

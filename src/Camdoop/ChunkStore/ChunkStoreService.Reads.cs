using Camdoop.KeyRouting;
using Camdoop.Records;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>How a read went. <see cref="Repairs"/> counts the bad replicas (corrupt or missing) it started repairing.</summary>
public sealed record ReadResult(bool Ok, byte[]? Bytes, ChunkMeta? Meta, Coordinate From, bool NotFound, string? Error, int Repairs)
{
    public static ReadResult Missing(string error) => new(false, null, null, default, true, error, 0);

    public static ReadResult Failed(string error) => new(false, null, null, default, false, error, 0);
}

// Reads: replicas tried in turn (this server's own first), each verified by its holder; bad ones repaired.
public sealed partial class ChunkStoreService
{
    private readonly Dictionary<(int Peer, ulong Id), ReadOperation> _reads = [];

    /// <summary>
    /// Reads chunk <paramref name="chunk"/> from one of its replicas. <paramref name="done"/> runs on the event loop with
    /// the bytes (checked against the checksum), or NotFound when every replica server says it has no such chunk.
    /// A replica found corrupt or missing at one of the chunk's placement targets is repaired with the good bytes.
    /// <paramref name="admit"/>, when given, is asked on the event loop with the chunk's metadata just before its bytes
    /// are allocated (maybe again for another replica); when it says no, the read ends at once, failed, with nothing
    /// allocated: a reader that counts what it holds (the front-end's memory budget) takes the room first.
    /// </summary>
    public void Read(in Key chunk, Action<ReadResult> done, Func<ChunkMeta, bool>? admit = null)
    {
        ArgumentNullException.ThrowIfNull(done);
        var candidates = new List<Coordinate>();
        if (Local.TryGet(chunk, out _))
        {
            candidates.Add(Context.Self);
        }
        var placement = PlacementOf(chunk);
        foreach (var c in placement)
        {
            if (!candidates.Contains(c))
            {
                candidates.Add(c);
            }
        }
        new ReadOperation(this, chunk, candidates, placement, done, admit).Next();
    }

    /// <summary>
    /// Reads a file under <paramref name="holder"/>'s data directory (a job's reduce output, which is not a replicated
    /// chunk): <paramref name="relativePath"/> must lie under "jobs/". Transferred and checked like a chunk, and
    /// admitted like one (<see cref="Read"/>).
    /// </summary>
    public void ReadFile(Coordinate holder, string relativePath, Action<ReadResult> done, Func<ChunkMeta, bool>? admit = null)
    {
        ArgumentNullException.ThrowIfNull(relativePath);
        ArgumentNullException.ThrowIfNull(done);
        if (!IsServableFile(relativePath))
        {
            done(ReadResult.Failed($"'{relativePath}' is not a job output path"));
            return;
        }
        new ReadOperation(this, FileKey(relativePath), [holder], [], done, admit, relativePath).Next();
    }

    /// <summary>The id a served file travels under.</summary>
    public static Key FileKey(string relativePath) => Key.FromString("camdoop/file/" + relativePath);

    private static bool IsServableFile(string path) =>
        path.StartsWith("jobs/", StringComparison.Ordinal) && !path.Contains("..", StringComparison.Ordinal)
        && !path.Contains('\\', StringComparison.Ordinal) && !Path.IsPathRooted(path) && path.Length <= 1024;

    private void OnFileRequest(Coordinate peer, int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadFileRequest(payload, out string? path))
        {
            Counters.Malformed++;
            return;
        }
        var request = (peerIndex, id);
        if (_outbound.ContainsKey(request) || _filesBeingHashed.Contains(request))
        {
            return; // Already serving it; this is the reader's retry.
        }
        string root = Path.GetFullPath(Context.DataDirectory) + Path.DirectorySeparatorChar;
        string full = Path.GetFullPath(Path.Combine(root, path!));
        var file = new FileInfo(full);
        if (!IsServableFile(path!) || !full.StartsWith(root, StringComparison.Ordinal) || !file.Exists || file.Length > ChunkMeta.MaxChunkBytes)
        {
            SendControl(peer, ChunkWire.WriteStatus(_frame, ChunkMessage.ReadReply, id, (byte)ReadStatus.Missing));
            return;
        }
        // The offer carries the file's checksum, so the whole file is read first: off the loop.
        _filesBeingHashed.Add(request);
        FileChunkSource? source = null;
        ulong checksum = 0;
        Context.RunOffLoop(
            () =>
            {
                try
                {
                    source = new FileChunkSource(full);
                    checksum = Checksum(source);
                }
                catch (IOException)
                {
                    source?.Dispose();
                    source = null;
                }
            },
            () =>
            {
                _filesBeingHashed.Remove(request);
                if (_stopped || source is null || source.Length > ChunkMeta.MaxChunkBytes)
                {
                    source?.Dispose();
                    if (!_stopped)
                    {
                        SendControl(peer, ChunkWire.WriteStatus(_frame, ChunkMessage.ReadReply, id, (byte)ReadStatus.Missing));
                    }
                    return;
                }
                var meta = new ChunkMeta { Id = FileKey(path!), Length = source.Length, Checksum = checksum, Dataset = "file", Count = 1 };
                Counters.ReadsServed++;
                StartOutbound(peer, TransferPurpose.ReadResponse, meta, source, static _ => { }, id);
            });
    }

    /// <summary>XXH64 of a whole file, read block by block (off the event loop).</summary>
    private static ulong Checksum(FileChunkSource source)
    {
        var hash = new XxHash64();
        var block = new byte[256 * 1024];
        for (long offset = 0; offset < source.Length;)
        {
            int read = source.Read(offset, block);
            if (read == 0)
            {
                throw new IOException("the file shrank while it was read");
            }
            hash.Append(block.AsSpan(0, read));
            offset += read;
        }
        return hash.GetDigest();
    }

    private void OnReadRequest(Coordinate peer, int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadReadRequest(payload, out var chunk))
        {
            Counters.Malformed++;
            return;
        }
        if (_outbound.ContainsKey((peerIndex, id)))
        {
            return; // Already serving it; this is the reader's retry.
        }
        var store = Local;
        var health = store.Verify(chunk);
        if (health != ReplicaHealth.Good)
        {
            if (health == ReplicaHealth.Corrupt)
            {
                Counters.CorruptDetected++;
                Context.Log(LogLevel.Warning, $"chunk store: replica of chunk {chunk} is corrupt (checksum mismatch); reported to reader {peer.Name}");
            }
            SendControl(peer, ChunkWire.WriteStatus(_frame, ChunkMessage.ReadReply, id, (byte)(health == ReplicaHealth.Corrupt ? ReadStatus.Corrupt : ReadStatus.Missing)));
            return;
        }
        if (_outbound.Count >= Options.MaxTransfers)
        {
            Counters.Busy++;
            SendControl(peer, ChunkWire.WriteStatus(_frame, ChunkMessage.ReadReply, id, (byte)ReadStatus.Busy));
            return;
        }
        store.TryGet(chunk, out var held);
        FileChunkSource source;
        try
        {
            source = new FileChunkSource(held.DataPath);
        }
        catch (IOException)
        {
            SendControl(peer, ChunkWire.WriteStatus(_frame, ChunkMessage.ReadReply, id, (byte)ReadStatus.Missing));
            return;
        }
        Counters.ReadsServed++;
        StartOutbound(peer, TransferPurpose.ReadResponse, held.Meta, source, static _ => { }, id);
    }

    private void OnReadReply(int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadStatus(payload, (byte)ReadStatus.Busy, out byte status) || status == 0)
        {
            Counters.Malformed++;
            return;
        }
        if (_reads.TryGetValue((peerIndex, id), out var read))
        {
            read.OnReadReply((ReadStatus)status);
        }
    }

    private void AcceptReadResponse(Coordinate peer, int peerIndex, ulong id, ChunkMeta meta)
    {
        if (!_reads.TryGetValue((peerIndex, id), out var read) || meta.Id != read.Chunk)
        {
            SendOfferReply(peer, id, OfferStatus.Refused);
            return;
        }
        if (!read.Admits(meta))
        {
            SendOfferReply(peer, id, OfferStatus.Refused);
            read.Refuse(meta);
            return;
        }
        var transfer = new InboundTransfer(this, peer, id, TransferPurpose.ReadResponse, meta, new MemoryChunkSink(meta.Length), read.OnTransferDone);
        _inbound[(peerIndex, id)] = transfer;
        Counters.InboundAccepted++;
        read.OnTransferStarted();
        SendOfferReply(peer, id, OfferStatus.Accepted);
        transfer.Begin();
    }

    /// <summary>
    /// Sends good bytes to a replica server whose copy was corrupt or missing. <paramref name="done"/>, when given, runs
    /// on the loop with whether the repaired replica is durable (for this server's own replica only).
    /// </summary>
    private void Repair(Coordinate target, ChunkMeta meta, byte[] bytes, Action<string?>? done = null)
    {
        Counters.RepairsStarted++;
        if (target == Context.Self)
        {
            StoreLocal(meta, bytes, error =>
            {
                if (error is null)
                {
                    Counters.RepairsCompleted++;
                    Context.Log(LogLevel.Info, $"chunk store: local replica of chunk {meta.Id} ({meta.Dataset}) repaired");
                }
                done?.Invoke(error);
            });
            return;
        }
        StartOutbound(target, TransferPurpose.Repair, meta, new MemoryChunkSource(bytes), static _ => { });
    }

    private sealed class ReadOperation
    {
        private const int MaxRequests = 6;

        private readonly ChunkStoreService _service;
        private readonly List<Coordinate> _candidates;
        private readonly IReadOnlyList<Coordinate> _placement;
        private readonly Action<ReadResult> _done;
        private readonly Func<ChunkMeta, bool>? _admit;
        private readonly List<Coordinate> _bad = [];
        private readonly List<string> _reasons = [];
        private int _next;
        private int _missing;
        private Coordinate _holder;
        private (int Peer, ulong Id) _key;
        private int _requests;
        private bool _transferring;
        private TimerHandle _timer;
        private bool _finished;

        private readonly string? _file;

        public ReadOperation(ChunkStoreService service, Key chunk, List<Coordinate> candidates, IReadOnlyList<Coordinate> placement, Action<ReadResult> done, Func<ChunkMeta, bool>? admit, string? file = null)
        {
            _service = service;
            Chunk = chunk;
            _candidates = candidates;
            _placement = placement;
            _done = done;
            _admit = admit;
            _file = file;
        }

        public Key Chunk { get; }

        /// <summary>Tries the next replica; finishes when there is none left.</summary>
        public void Next()
        {
            var context = _service.Context;
            while (_next < _candidates.Count)
            {
                var candidate = _candidates[_next++];
                if (candidate != context.Self || _file is not null)
                {
                    Request(candidate);
                    return;
                }
                var health = _service.Local.Verify(Chunk);
                if (health == ReplicaHealth.Good && _service.Local.TryGet(Chunk, out var held))
                {
                    if (!Admits(held.Meta))
                    {
                        Refuse(held.Meta);
                        return;
                    }
                    byte[] bytes;
                    try
                    {
                        bytes = File.ReadAllBytes(held.DataPath);
                    }
                    catch (IOException e)
                    {
                        _reasons.Add($"{candidate.Name}: {e.Message}");
                        continue;
                    }
                    Succeed(held.Meta, bytes, candidate);
                    return;
                }
                Bad(candidate, health == ReplicaHealth.Corrupt ? ReadStatus.Corrupt : ReadStatus.Missing);
            }
            Fail(null);
        }

        public void OnReadReply(ReadStatus status)
        {
            if (_finished || _transferring)
            {
                return;
            }
            if (status == ReadStatus.Busy && _requests < MaxRequests)
            {
                return; // The timer asks again.
            }
            Stop();
            Bad(_holder, status);
            Next();
        }

        public void OnTransferStarted()
        {
            _transferring = true;
            if (_timer.IsSet)
            {
                _service.Context.CancelTimer(_timer);
                _timer = default;
            }
        }

        public void OnTransferDone(InboundTransfer transfer)
        {
            if (_finished)
            {
                return;
            }
            _service._reads.Remove(_key);
            if (transfer.Result == DoneStatus.Stored)
            {
                _service.Counters.InboundCompleted++;
                Succeed(transfer.Meta, ((MemoryChunkSink)transfer.Sink).Take(), _holder);
                return;
            }
            _reasons.Add($"{_holder.Name}: transfer failed ({transfer.Result})");
            _transferring = false;
            Next();
        }

        /// <summary>Whether the reader takes <paramref name="meta"/>'s bytes now (asked before they are allocated).</summary>
        public bool Admits(ChunkMeta meta) => _admit is null || _admit(meta);

        /// <summary>Ends the read: the reader has no room for the bytes. Other replicas are not tried.</summary>
        public void Refuse(ChunkMeta meta)
        {
            if (_finished)
            {
                return;
            }
            Stop();
            _finished = true;
            _done(ReadResult.Failed($"chunk {Chunk}: the reader has no room for its {meta.Length} bytes now"));
        }

        public void Fail(string? reason)
        {
            if (_finished)
            {
                return;
            }
            if (reason is not null)
            {
                _reasons.Add(reason);
            }
            Stop();
            _finished = true;
            string why = _reasons.Count == 0 ? "no replica server is reachable" : string.Join("; ", _reasons);
            _done(_missing > 0 && _missing == _candidates.Count
                ? ReadResult.Missing($"chunk {Chunk} is not stored ({why})")
                : ReadResult.Failed($"chunk {Chunk} could not be read: {why}"));
        }

        private void Request(Coordinate holder)
        {
            _holder = holder;
            _key = (_service.Context.Torus.IndexOf(holder), _service.NewId());
            _requests = 0;
            _transferring = false;
            _service._reads[_key] = this;
            SendRequest();
        }

        private void SendRequest()
        {
            _requests++;
            _service.SendControl(_holder, _file is null
                ? ChunkWire.WriteReadRequest(_service._frame, _key.Id, Chunk)
                : ChunkWire.WriteFileRequest(_service._frame, _key.Id, _file));
            long timeout = Math.Min(_service.Options.InitialRetransmitTimeout << (_requests - 1), _service.Options.MaxRetransmitTimeout);
            _timer = _service.Context.SetTimer(timeout, OnTimer);
        }

        private void OnTimer()
        {
            _timer = default;
            if (_finished || _transferring)
            {
                return;
            }
            if (_requests < MaxRequests)
            {
                SendRequest();
                return;
            }
            Stop();
            _reasons.Add($"{_holder.Name}: no answer");
            Next();
        }

        private void Bad(Coordinate holder, ReadStatus status)
        {
            _reasons.Add($"{holder.Name}: {status.ToString().ToLowerInvariant()}");
            if (status == ReadStatus.Missing)
            {
                _missing++;
            }
            if (status != ReadStatus.Busy && _placement.Contains(holder))
            {
                _bad.Add(holder);
            }
        }

        private void Stop()
        {
            _service._reads.Remove(_key);
            if (_timer.IsSet)
            {
                _service.Context.CancelTimer(_timer);
                _timer = default;
            }
        }

        private void Succeed(ChunkMeta meta, byte[] bytes, Coordinate from)
        {
            Stop();
            _finished = true;
            var repair = _bad.Where(b => b != from).Distinct().ToList();
            _done(new ReadResult(true, bytes, meta, from, false, null, repair.Count));
            foreach (var target in repair)
            {
                _service.Repair(target, meta, bytes);
            }
        }
    }
}

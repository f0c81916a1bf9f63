using System.Buffers.Binary;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>What setting servers (de/re)commissioned did: the servers that applied it, and those that did not answer.</summary>
public sealed record DecommissionResult(IReadOnlyList<Coordinate> Answered, IReadOnlyList<Coordinate> Unanswered);

/// <summary>How far draining has gone: replicas on the servers being drained that are not yet held three times elsewhere.</summary>
public sealed record DrainStatus(long ReplicasHeld, long NotYetElsewhere, IReadOnlyList<Coordinate> Unanswered)
{
    /// <summary>Every replica the drained servers hold is held three times (or on every other live server) elsewhere.</summary>
    public bool Safe => NotYetElsewhere == 0 && Unanswered.Count == 0;
}

// Decommissioning: a server set aside leaves every placement (re-replication's scans and new writes), as a lost one
// does, while it still runs and serves reads. Its replicas are copied to the servers that now own their positions,
// by it and by the other holders; once every position confirms a good replica it drops its own. Draining is safe when
// no replica it holds lacks three good replicas elsewhere. The set of decommissioned servers is held by every server
// (kept on disk, data directory, "decommissioned") and changed by asking every server; recommissioning takes a
// server back into the placements, so it receives its share again.
public sealed partial class ChunkStoreService
{
    private readonly HashSet<int> _decommissioned = [];
    private readonly Dictionary<ulong, DecommissionOperation> _decommissions = [];

    /// <summary>Servers set aside by decommissioning.</summary>
    public IEnumerable<Coordinate> Decommissioned => _decommissioned.Order().Select(Context.Torus.CoordinateOf);

    private string DecommissionedPath => Path.Combine(Context.DataDirectory, "decommissioned");

    private void LoadDecommissioned()
    {
        if (!File.Exists(DecommissionedPath))
        {
            return;
        }
        foreach (var line in File.ReadAllLines(DecommissionedPath))
        {
            if (Coordinate.TryParse(line.Trim(), out var server) && Context.Torus.Contains(server))
            {
                _decommissioned.Add(Context.Torus.IndexOf(server));
            }
        }
    }

    /// <summary>
    /// Decommissions (or, with <paramref name="decommission"/> false, recommissions) <paramref name="servers"/> on every
    /// reachable server; <paramref name="done"/> names those that applied it and those that did not answer.
    /// </summary>
    public void SetDecommissioned(IReadOnlyList<Coordinate> servers, bool decommission, Action<DecommissionResult> done)
    {
        ArgumentNullException.ThrowIfNull(servers);
        ArgumentNullException.ThrowIfNull(done);
        var torus = Context.Torus;
        var indices = servers.Select(torus.IndexOf).ToArray();
        ApplyDecommission(indices, decommission);
        var peers = torus.All().Where(c => c != Context.Self && IsReachable(c)).ToList();
        var operation = new DecommissionOperation(this, NewId(), indices, decommission, peers, done);
        _decommissions[operation.Id] = operation;
        operation.Start();
    }

    /// <summary>
    /// How far draining <paramref name="servers"/> has gone: every server is asked which replicas it holds, and each
    /// replica on a drained server is looked for, good, on three servers not drained (or on every one alive).
    /// </summary>
    public void DrainStatusOf(IReadOnlyList<Coordinate> servers, Action<DrainStatus> done)
    {
        ArgumentNullException.ThrowIfNull(servers);
        ArgumentNullException.ThrowIfNull(done);
        var drained = servers.ToHashSet();
        ListReplicas(null, list =>
        {
            int others = Context.Torus.All().Count(s => !drained.Contains(s) && (s == Context.Self || IsReachable(s)));
            int needed = Math.Min(ChunkPlacement.Replicas, others);
            long held = 0;
            long notYet = 0;
            foreach (var replicas in list.Replicas.Values)
            {
                int onDrained = replicas.Count(r => drained.Contains(r.Server));
                if (onDrained == 0)
                {
                    continue;
                }
                held += onDrained;
                int elsewhere = replicas.Count(r => !drained.Contains(r.Server) && r.State is ReplicaState.Good or ReplicaState.Unchecked);
                if (elsewhere < needed)
                {
                    notYet += onDrained;
                }
            }
            done(new DrainStatus(held, notYet, [.. list.Unanswered.Where(drained.Contains)]));
        });
    }

    private void ApplyDecommission(int[] servers, bool decommission)
    {
        bool changed = false;
        foreach (int server in servers)
        {
            changed |= decommission ? _decommissioned.Add(server) : _decommissioned.Remove(server);
        }
        if (!changed)
        {
            return;
        }
        _rescan = true;
        _confirmed.Clear(); // placement changed: see KeepReplicas
        var torus = Context.Torus;
        string names = string.Join(' ', servers.Select(s => torus.CoordinateOf(s).Name));
        Context.Log(LogLevel.Info, decommission
            ? $"chunk store: {names} decommissioned: their replicas are copied to the servers that now own their positions"
            : $"chunk store: {names} recommissioned: they receive their share again");
        var lines = _decommissioned.Order().Select(s => torus.CoordinateOf(s).Name + "\n");
        SaveStateFile(DecommissionedPath, System.Text.Encoding.UTF8.GetBytes(string.Concat(lines)), "the decommissioned servers");
    }

    /// <summary>The servers placement may use now: the reachable ones, less those decommissioned.</summary>
    private ServerSet PlacementView()
    {
        var torus = Context.Torus;
        var view = new ServerSet(torus.Count);
        for (int i = 0; i < torus.Count; i++)
        {
            if (!_decommissioned.Contains(i) && _routing.IsReachable(torus.CoordinateOf(i)))
            {
                view.Add(i);
            }
        }
        return view;
    }

    private void OnDecommissionRequest(Coordinate peer, ulong id, ReadOnlySpan<byte> payload)
    {
        int p = ChunkWire.HeaderSize;
        if (payload.Length < p + 3 || payload[p] > 1)
        {
            Counters.Malformed++;
            return;
        }
        bool decommission = payload[p] == 1;
        int count = BinaryPrimitives.ReadUInt16BigEndian(payload[(p + 1)..]);
        p += 3;
        if (payload.Length != p + (2 * count))
        {
            Counters.Malformed++;
            return;
        }
        var servers = new int[count];
        for (int i = 0; i < count; i++, p += 2)
        {
            servers[i] = BinaryPrimitives.ReadUInt16BigEndian(payload[p..]);
            if (servers[i] >= Context.Torus.Count)
            {
                Counters.Malformed++;
                return;
            }
        }
        ApplyDecommission(servers, decommission);
        SendControl(peer, ChunkWire.WriteHeader(_frame, ChunkMessage.DecommissionReply, id));
    }

    private void OnDecommissionReply(int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (payload.Length != ChunkWire.HeaderSize)
        {
            Counters.Malformed++;
            return;
        }
        if (_decommissions.TryGetValue(id, out var operation))
        {
            operation.OnReply(peerIndex);
        }
    }

    private sealed class DecommissionOperation(ChunkStoreService service, ulong id, int[] servers, bool decommission, List<Coordinate> peers, Action<DecommissionResult> done)
        : EveryServerOperation<int>(service, id, peers, decommission ? "decommissioning" : "recommissioning")
    {
        public void Start()
        {
            AskAll();
            LocalDone();
        }

        public void OnReply(int peerIndex)
        {
            if (TryAwaiting(peerIndex, out var peer))
            {
                Received(peer, more: false);
            }
        }

        protected override void Send(Peer peer)
        {
            var frame = Service._frame.AsSpan();
            int p = ChunkWire.WriteHeader(frame, ChunkMessage.DecommissionRequest, Id);
            frame[p] = decommission ? (byte)1 : (byte)0;
            BinaryPrimitives.WriteUInt16BigEndian(frame[(p + 1)..], (ushort)servers.Length);
            p += 3;
            foreach (int server in servers)
            {
                BinaryPrimitives.WriteUInt16BigEndian(frame[p..], (ushort)server);
                p += 2;
            }
            Service.SendControl(peer.Server, p);
        }

        protected override void Forget() => Service._decommissions.Remove(Id);

        protected override void Complete(List<Coordinate> answered, List<Coordinate> unanswered) => done(new DecommissionResult(answered, unanswered));
    }
}

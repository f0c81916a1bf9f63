using System.Globalization;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;

namespace Camdoop.ChunkStore;

// Scrubbing: in the background, every replica this server holds is read again and checked against its checksum, one
// after another at a bounded byte rate, a full pass every ScrubInterval. A replica found corrupt (or whose file is gone)
// is marked so (reads skip it, fsck reports it) and repaired from a good replica on another server, through a read
// and its repair. The check itself runs off the loop; the index is touched only on the loop.
public sealed partial class ChunkStoreService
{
    /// <summary>Repairs the scrubber has under way at most; it waits for one to end before checking more.</summary>
    private const int MaxScrubRepairs = 4;

    /// <summary>File in the chunks directory holding when the last pass ended (Unix ms), so a restart does not start a pass early.</summary>
    private const string ScrubRecordFile = "scrubbed";

    private byte[]? _scrubBuffer;
    private Action? _scrubStep;
    private Action? _scrubPassStart;
    private List<Key>? _scrubPass;
    private int _scrubNext;
    private int _scrubRepairs;
    private bool _scrubWaitsForRepair;
    private long _passChunks;
    private long _passCorrupt;

    /// <summary>Whether a scrub pass is under way.</summary>
    public bool Scrubbing => _scrubPass is not null;

    private void StartScrubbing()
    {
        if (Options.ScrubInterval <= 0 || Options.ScrubBytesPerSecond <= 0)
        {
            return;
        }
        _scrubStep = ScrubStep;
        _scrubPassStart = BeginScrubPass;
        long delay = Options.ScrubInterval;
        long lastEnd = ReadScrubRecord();
        if (lastEnd > 0)
        {
            Counters.ScrubLastPassEnd = lastEnd;
            long sinceMs = Context.UnixTimeMilliseconds - lastEnd;
            long intervalMs = Options.ScrubInterval / NodeOptions.Millisecond;
            delay = sinceMs < 0 ? Options.ScrubInterval
                : sinceMs >= intervalMs ? 0
                : Options.ScrubInterval - (sinceMs * NodeOptions.Millisecond);
        }
        Context.SetTimer(delay, _scrubPassStart);
    }

    private void BeginScrubPass()
    {
        if (_stopped)
        {
            return;
        }
        _scrubPass = [.. Local.All.Select(c => c.Meta.Id)];
        _scrubNext = 0;
        _passChunks = 0;
        _passCorrupt = 0;
        ScrubStep();
    }

    /// <summary>Checks the next replica of the pass that is still held, or ends the pass.</summary>
    private void ScrubStep()
    {
        if (_stopped || _scrubPass is null)
        {
            return;
        }
        if (_scrubRepairs >= MaxScrubRepairs)
        {
            _scrubWaitsForRepair = true;
            return;
        }
        while (_scrubNext < _scrubPass.Count)
        {
            if (Local.TryGet(_scrubPass[_scrubNext++], out var held))
            {
                Check(held);
                return;
            }
            // Deleted since the pass began.
        }
        EndScrubPass();
    }

    private void Check(StoredChunk held)
    {
        long start = Now;
        var buffer = _scrubBuffer ??= new byte[LocalChunkStore.CheckBufferBytes];
        var health = ReplicaHealth.Good;
        Context.RunOffLoop(
            () => health = LocalChunkStore.CheckFile(held.DataPath, held.Meta, buffer),
            () =>
            {
                if (_stopped)
                {
                    return;
                }
                OnScrubbed(held, health);
                // The next check starts no earlier than this chunk's bytes allow at the scrub rate, counted from when
                // this one started: over any span the scrubber reads at most the rate's bytes plus one chunk.
                long pause = held.Meta.Length * 1_000_000_000L / Options.ScrubBytesPerSecond;
                Context.SetTimer(Math.Max(0, start + pause - Now), _scrubStep!);
            });
    }

    private void OnScrubbed(StoredChunk held, ReplicaHealth health)
    {
        Counters.ScrubChunks++;
        Counters.ScrubBytes += held.Meta.Length;
        _passChunks++;
        if (!Local.TryGet(held.Meta.Id, out var current) || !ReferenceEquals(current, held))
        {
            return; // Deleted, or replaced by a repair or a new write while it was read: the result is of old bytes.
        }
        held.Checked = true;
        held.Corrupt = health != ReplicaHealth.Good;
        if (!held.Corrupt)
        {
            return;
        }
        Counters.ScrubCorrupt++;
        _passCorrupt++;
        string what = health == ReplicaHealth.Missing ? "its data file is gone" : "its bytes do not match the checksum";
        Context.Log(LogLevel.Warning, $"chunk store: scrub: replica of chunk {held.Meta.Id} ({held.Meta.Dataset}) is corrupt ({what}); repairing it from another replica");
        RepairScrubbed(held);
    }

    /// <summary>Reads the chunk from the other replica servers (repairing any other bad one met), then rewrites this one.</summary>
    private void RepairScrubbed(StoredChunk held)
    {
        _scrubRepairs++;
        var id = held.Meta.Id;
        var placement = PlacementOf(id);
        var candidates = placement.Where(c => c != Context.Self).ToList();
        new ReadOperation(this, id, candidates, placement, result =>
        {
            if (_stopped)
            {
                return;
            }
            if (!result.Ok)
            {
                Counters.ScrubUnrepairable++;
                Context.Log(LogLevel.Error, $"chunk store: scrub: corrupt replica of chunk {id} ({held.Meta.Dataset}) cannot be repaired: {result.Error}");
                ScrubRepairDone();
                return;
            }
            if (!Local.TryGet(id, out var current) || !ReferenceEquals(current, held))
            {
                ScrubRepairDone(); // Deleted, or already rewritten, meanwhile.
                return;
            }
            Repair(Context.Self, result.Meta!, result.Bytes!, error =>
            {
                if (error is null)
                {
                    Counters.ScrubRepaired++;
                }
                else
                {
                    Counters.ScrubUnrepairable++;
                    Context.Log(LogLevel.Error, $"chunk store: scrub: rewriting the replica of chunk {id}: {error}");
                }
                ScrubRepairDone();
            });
        }, null).Next();
    }

    private void ScrubRepairDone()
    {
        _scrubRepairs--;
        if (_scrubWaitsForRepair && !_stopped)
        {
            _scrubWaitsForRepair = false;
            Context.SetTimer(0, _scrubStep!);
        }
    }

    private void EndScrubPass()
    {
        _scrubPass = null;
        long end = Context.UnixTimeMilliseconds;
        Counters.ScrubPasses++;
        Counters.ScrubLastPassEnd = end;
        Context.Log(_passCorrupt > 0 ? LogLevel.Info : LogLevel.Debug, $"chunk store: scrub pass done: {_passChunks} replicas checked, {_passCorrupt} corrupt");
        string path = Path.Combine(Local.Directory, ScrubRecordFile);
        Context.RunOffLoop(
            () =>
            {
                try
                {
                    File.WriteAllText(path, end.ToString(CultureInfo.InvariantCulture));
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    // The next pass after a restart then starts one interval after the start: no harm.
                }
            },
            static () => { });
        Context.SetTimer(Options.ScrubInterval, _scrubPassStart!);
    }

    /// <summary>When the last recorded pass ended (Unix ms); 0 when none is recorded.</summary>
    private long ReadScrubRecord()
    {
        try
        {
            string path = Path.Combine(Local.Directory, ScrubRecordFile);
            return File.Exists(path) && long.TryParse(File.ReadAllText(path), NumberStyles.None, CultureInfo.InvariantCulture, out long end) ? end : 0;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return 0;
        }
    }
}
